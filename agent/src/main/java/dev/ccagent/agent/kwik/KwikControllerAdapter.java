package dev.ccagent.agent.kwik;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.runtime.AgentRuntime;
import dev.ccagent.agent.runtime.WakeupTimer;
import dev.ccagent.agent.detect.SendTelemetry;
import dev.ccagent.cc.AckEvent;
import dev.ccagent.cc.CcSnapshot;
import dev.ccagent.cc.LossEvent;
import dev.ccagent.cc.RttEstimator;
import tech.kwik.core.cc.CongestionControlEventListener;
import tech.kwik.core.cc.CongestionController;
import tech.kwik.core.common.PnSpace;
import tech.kwik.core.packet.PacketInfo;
import tech.kwik.core.packet.QuicPacket;

import java.time.Instant;
import java.util.List;

/**
 * kwik's {@link CongestionController}, implemented by one of our stack-neutral controllers.
 *
 * <p>kwik calls it from three threads (sender: {@code registerInFlight}, {@code remainingCwnd};
 * receiver: {@code registerAcked}, {@code registerLost}; loss-detection timer: {@code registerLost});
 * every call takes this object's monitor, as kwik's own controllers do. Only 1-RTT (App space)
 * packets reach our algorithm: packet numbers restart per space and the handshake spaces carry a
 * handful of packets; they are still counted in bytes in flight.
 *
 * <p>Times: our algorithms run on {@link System#nanoTime()}. kwik stamps packets and ACK arrivals
 * with {@link Instant}s from its wall clock; they are converted with an offset measured when the
 * connection starts and clamped so that no converted time lies in the future. RTT samples are ours,
 * in nanoseconds (kwik keeps whole milliseconds, 0 on loopback).
 *
 * <p>Pacing: {@link #remainingCwnd()} answers 0 while the pacer has no budget and asks the shared
 * {@link WakeupTimer} to flush kwik's sender when it refills; otherwise it answers at least one full
 * packet (kwik builds a runt packet from a small positive answer) and never more than
 * {@link Integer#MAX_VALUE} (kwik casts the answer to int).
 *
 * <p>Fail open: an exception from our code is counted and logged once, and the connection continues
 * on kwik's own controller, which is handed our bytes-in-flight count.
 */
public final class KwikControllerAdapter implements CongestionController, WakeupTimer.Target {

    private final Object sender;
    private final CongestionControlEventListener listener;
    private final int maxPacketSize;
    private final KwikConnectionSelector selector;
    private final WakeupTimer.Entry wakeup = new WakeupTimer.Entry(this);
    private final AckEvent ackEvent = new AckEvent();
    private final LossEvent lossEvent = new LossEvent();
    private final RttEstimator rtt;
    private final long wallToMonoOffset;
    /** Send-path counters for the spin detector and JFR (kept for stock connections too). */
    private final SendTelemetry telemetry = new SendTelemetry("kwik");
    /** The same measurement for every arm (ConnectionSummary, per-arm aggregates, guard). */
    private final KwikMeter meter = new KwikMeter(this);

    /** kwik's own controller: the fallback, and the whole behaviour for a stock arm. */
    private CongestionController stock;
    private volatile CongestionController delegate;
    private dev.ccagent.cc.CongestionController cc;
    private AgentConfig.Arm arm;
    private long bytesInFlight;

    // the ACK being processed on the receiver thread (set by the LossDetector.onAckReceived advice)
    private long pendingAckTime;
    private long pendingAckDelay;
    private long pendingLargestAcked = -1;

    // counters for status and events
    private long pacerBlocked;
    private long windowLimited;

    KwikControllerAdapter(Object sender, CongestionControlEventListener listener, int maxPacketSize,
                          KwikConnectionSelector selector, dev.ccagent.cc.CongestionController cc,
                          AgentConfig.Arm arm, long initialRttNanos) {
        this.sender = sender;
        this.listener = listener;
        this.maxPacketSize = maxPacketSize;
        this.selector = selector;
        this.cc = cc;
        this.arm = arm;
        this.rtt = new RttEstimator(initialRttNanos);
        Instant wall = Instant.now();
        this.wallToMonoOffset = wall.getEpochSecond() * 1_000_000_000L + wall.getNano() - System.nanoTime();
    }

    void setStock(CongestionController stock) {
        this.stock = stock;
    }

    /** Observes a stock-arm connection: kwik's controller decides, we only count (detector, JFR). */
    void observeStock(AgentConfig.Arm stockArm) {
        synchronized (this) {
            this.arm = stockArm;
            this.delegate = stock;
        }
    }

    public SendTelemetry telemetry() {
        return telemetry;
    }

    public KwikMeter meter() {
        return meter;
    }

    /** The algorithm in charge: ours, or {@code stock} (an arm that keeps kwik's, or a fallback). */
    public synchronized String algorithm() {
        return delegate != null ? AgentConfig.STOCK : cc != null ? cc.algorithm() : "unassigned";
    }

    public synchronized AgentConfig.Arm arm() {
        return arm;
    }

    /** Copies our controller's state (null when the connection runs the stock algorithm). */
    public synchronized CcSnapshot snapshot(CcSnapshot into) {
        if (cc == null || delegate != null) {
            return null;
        }
        cc.snapshot(into);
        into.bytesInFlight = bytesInFlight;
        return into;
    }

    public synchronized long pacerBlockedCount() {
        return pacerBlocked;
    }

    public synchronized long windowLimitedCount() {
        return windowLimited;
    }

    // ------------------------------------------------------------------ called by advice

    /** The receiver thread is about to process an ACK frame received at {@code timeReceived}. */
    public void onAckFrame(Instant timeReceived, long largestAcknowledged, int ackDelayMillis) {
        meter.ackFrame(timeReceived, largestAcknowledged, ackDelayMillis);
        synchronized (this) {
            long now = System.nanoTime();
            pendingAckTime = timeReceived != null ? Math.min(now, toMono(timeReceived)) : now;
            pendingAckDelay = Math.max(0, ackDelayMillis) * 1_000_000L;
            pendingLargestAcked = largestAcknowledged;
        }
    }

    // ------------------------------------------------------------------ kwik's interface

    @Override
    public void registerInFlight(QuicPacket packet) {
        meter.sent(packet);
        telemetry.packetInFlight(packet.getSize());
        CongestionController d = delegate;
        if (d != null) {
            d.registerInFlight(packet);
            return;
        }
        long inFlight;
        try {
            synchronized (this) {
                if (!assigned()) {
                    delegate.registerInFlight(packet);
                    return;
                }
                int size = packet.getSize();
                bytesInFlight += size;
                inFlight = bytesInFlight;
                if (packet.getPnSpace() == PnSpace.App) {
                    cc.onPacketSent(System.nanoTime(), KwikReflection.packetNumber(packet), size, bytesInFlight, true);
                }
            }
        } catch (RuntimeException e) {
            fallBack("registerInFlight", e);
            return;
        }
        listener.bytesInFlightIncreased(inFlight);
    }

    @Override
    public void registerAcked(List<? extends PacketInfo> acked) {
        meter.acked(acked);
        CongestionController d = delegate;
        if (d != null) {
            d.registerAcked(acked);
            return;
        }
        long inFlight;
        try {
            synchronized (this) {
                if (!assigned()) {
                    delegate.registerAcked(acked);
                    return;
                }
                long now = System.nanoTime();
                long ackTime = pendingAckTime != 0 ? pendingAckTime : now;
                AckEvent ev = ackEvent.reset(ackTime, bytesInFlight);
                long removed = 0;
                long largestSent = Long.MIN_VALUE;
                for (int i = 0, n = acked.size(); i < n; i++) {
                    PacketInfo info = acked.get(i);
                    QuicPacket p = info.packet();
                    int size = p.getSize();
                    removed += size;
                    if (p.getPnSpace() == PnSpace.App) {
                        long pn = KwikReflection.packetNumber(p);
                        long sent = Math.min(ackTime, toMono(info.timeSent()));
                        ev.addPacket(pn, sent, size);
                        if (pn == pendingLargestAcked) {
                            largestSent = sent;
                        }
                    }
                }
                bytesInFlight = Math.max(0, bytesInFlight - removed);
                boolean sample = largestSent != Long.MIN_VALUE;
                if (sample) {
                    rtt.onSample(ackTime - largestSent, Math.min(pendingAckDelay, 25_000_000L));
                }
                ev.rtt(rtt, sample);
                ev.ackDelayNanos = pendingAckDelay;
                if (ev.count() > 0) {
                    cc.onAck(ev);
                    KwikTelemetry.afterUpdate(this, cc, bytesInFlight);
                }
                pendingAckTime = 0;
                pendingLargestAcked = -1;
                inFlight = bytesInFlight;
            }
        } catch (RuntimeException e) {
            fallBack("registerAcked", e);
            return;
        }
        listener.bytesInFlightDecreased(inFlight);
    }

    @Override
    public void registerLost(List<? extends PacketInfo> lost) {
        meter.lost(lost);
        CongestionController d = delegate;
        if (d != null) {
            d.registerLost(lost);
            return;
        }
        long inFlight;
        try {
            synchronized (this) {
                if (!assigned()) {
                    delegate.registerLost(lost);
                    return;
                }
                long now = System.nanoTime();
                LossEvent ev = lossEvent.reset(now, bytesInFlight);
                long removed = 0;
                for (int i = 0, n = lost.size(); i < n; i++) {
                    PacketInfo info = lost.get(i);
                    QuicPacket p = info.packet();
                    int size = p.getSize();
                    removed += size;
                    if (p.getPnSpace() == PnSpace.App) {
                        ev.addPacket(KwikReflection.packetNumber(p), Math.min(now, toMono(info.timeSent())), size);
                    }
                }
                bytesInFlight = Math.max(0, bytesInFlight - removed);
                if (ev.count() > 0) {
                    cc.onPacketsLost(ev);
                    KwikTelemetry.afterUpdate(this, cc, bytesInFlight);
                }
                inFlight = bytesInFlight;
            }
        } catch (RuntimeException e) {
            fallBack("registerLost", e);
            return;
        }
        listener.bytesInFlightDecreased(inFlight);
    }

    @Override
    public void discard(List<? extends PacketInfo> discarded) {
        meter.discarded(discarded);
        CongestionController d = delegate;
        if (d != null) {
            d.discard(discarded);
            return;
        }
        long inFlight;
        try {
            synchronized (this) {
                long removed = 0;
                for (int i = 0, n = discarded.size(); i < n; i++) {
                    removed += discarded.get(i).packet().getSize();
                }
                bytesInFlight = Math.max(0, bytesInFlight - removed);
                inFlight = bytesInFlight;
            }
        } catch (RuntimeException e) {
            fallBack("discard", e);
            return;
        }
        listener.bytesInFlightDecreased(inFlight);
    }

    @Override
    public boolean canSend(int bytes) {
        CongestionController d = delegate;
        if (d != null) {
            return d.canSend(bytes);
        }
        synchronized (this) {
            return cc == null || bytesInFlight + bytes < cc.congestionWindow();
        }
    }

    @Override
    public long getBytesInFlight() {
        CongestionController d = delegate;
        if (d != null) {
            return d.getBytesInFlight();
        }
        synchronized (this) {
            return bytesInFlight;
        }
    }

    @Override
    public long getWindowSize() {
        CongestionController d = delegate;
        if (d != null) {
            return d.getWindowSize();
        }
        synchronized (this) {
            return cc != null ? cc.congestionWindow() : 0;
        }
    }

    @Override
    public void reset() {
        meter.reset();
        CongestionController d = delegate;
        if (d != null) {
            d.reset();
            return;
        }
        synchronized (this) {
            bytesInFlight = 0;
        }
        listener.bytesInFlightDecreased(0);
    }

    @Override
    public long remainingCwnd() {
        CongestionController d = delegate;
        if (d != null) {
            long r = d.remainingCwnd();
            if (r <= 0) {
                telemetry.windowRefused();
            }
            return r;
        }
        try {
            synchronized (this) {
                if (!assigned()) {
                    return delegate.remainingCwnd();
                }
                long room = cc.congestionWindow() - bytesInFlight;
                if (!cc.canSend(bytesInFlight)) {
                    windowLimited++;
                    telemetry.windowRefused();
                    return 0; // an ACK or loss will wake the sender (bytesInFlightDecreased)
                }
                long now = System.nanoTime();
                long at = cc.earliestSendTime(now, maxPacketSize);
                if (at > now) {
                    pacerBlocked++;
                    telemetry.pacerRefused(now, at);
                    AgentRuntime.timer().schedule(wakeup, at);
                    return 0;
                }
                if (at < now && cc.pacingRate() <= 0) {
                    // Contract violation (the quic-go 4054 shape): no budget (rate 0), yet a send time in
                    // the past. Sending would ignore the pacer; asking again at once would spin. Wait a
                    // minimum interval instead, and count it so that the detector reports it.
                    pacerBlocked++;
                    telemetry.pastSendTime(now);
                    AgentRuntime.timer().schedule(wakeup, now + SendTelemetry.PAST_TIME_MIN_WAIT_NANOS);
                    return 0;
                }
                KwikTelemetry.allowed(this, cc, now);
                return Math.min(Math.max(room, maxPacketSize), Integer.MAX_VALUE);
            }
        } catch (RuntimeException e) {
            fallBack("remainingCwnd", e);
            return delegate.remainingCwnd();
        }
    }

    /** The pacer's budget has refilled: let kwik's sender loop run (safe from any thread). */
    @Override
    public void wake() {
        listener.bytesInFlightDecreased(-1);
    }

    // ------------------------------------------------------------------ internals

    /**
     * Resolves the connection's arm on first use when it could not be chosen at creation (kwik
     * clients learn their connection id later). Caller holds the monitor. Returns false when the
     * connection runs the stock controller.
     */
    private boolean assigned() {
        if (cc != null) {
            return true;
        }
        KwikConnectionSelector.Choice choice = selector.choose(sender, maxPacketSize);
        arm = choice.arm;
        if (choice.controller == null) {
            delegate = stock;
            return false;
        }
        cc = choice.controller;
        return true;
    }

    private void fallBack(String where, RuntimeException e) {
        synchronized (this) {
            if (delegate == null) {
                KwikReflection.setStockBytesInFlight(stock, bytesInFlight);
                delegate = stock;
                AgentRuntime.timer().cancel(wakeup);
                KwikTelemetry.fellBack(this, where, e);
            }
        }
        AgentRuntime.recordFallback("kwik " + (cc != null ? cc.algorithm() : "controller") + " " + where, e);
    }

    private long toMono(Instant wall) {
        return wall.getEpochSecond() * 1_000_000_000L + wall.getNano() - wallToMonoOffset;
    }
}
