package dev.ccagent.agent.kwik;

import dev.ccagent.agent.connection.LiveConnection;
import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.runtime.AgentRuntime;
import dev.ccagent.agent.runtime.WakeupTimer;
import dev.ccagent.agent.connection.SendTelemetry;
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
 * with {@link Instant}s from its wall clock, which a clock step moves; {@link KwikPacketTimes} converts
 * each stamp on its own while it is fresh (a send stamp when the packet is registered, kept until its
 * ACK; a receive stamp when the ACK is processed), so that steps in either direction leave the samples
 * alone. RTT samples are ours, in nanoseconds (kwik keeps whole
 * milliseconds, 0 on loopback).
 *
 * <p>Pacing: {@link #remainingCwnd()} answers 0 while the pacer has no budget and asks the shared
 * {@link WakeupTimer} to flush kwik's sender when it refills; otherwise it answers at least one full
 * packet (kwik builds a runt packet from a small positive answer) and never more than
 * {@link Integer#MAX_VALUE} (kwik casts the answer to int).
 *
 * <p>Fail open: any {@link Throwable} from our code (also an {@link Error}; see docs/safety.md for the
 * {@link VirtualMachineError} policy) is counted and logged once per connection, and the connection
 * continues on kwik's own controller, which is handed our bytes-in-flight count and re-runs the call
 * that failed. Our state is committed only at the end of each callback, so a failing call leaves
 * nothing half-counted. Detach hands every connection over the same way ({@link #switchToStock()}).
 */
public final class KwikControllerAdapter implements CongestionController, WakeupTimer.Target, LiveConnection {

    private final Object sender;
    private final CongestionControlEventListener listener;
    private final int maxPacketSize;
    private final KwikConnectionSelector selector;
    private final WakeupTimer.Entry wakeup = new WakeupTimer.Entry(this);
    private final AckEvent ackEvent = new AckEvent();
    private final LossEvent lossEvent = new LossEvent();
    private final RttEstimator rtt;
    /** Each packet's send time and each ACK's receive time, converted to the monotonic clock. */
    private final KwikPacketTimes times = new KwikPacketTimes();
    /** Send-path counters for the spin detector and JFR (kept for stock connections too). */
    private final SendTelemetry telemetry = new SendTelemetry("kwik", true);
    /** The same measurement for every arm (ConnectionSummary, per-arm aggregates, guard); never throws. */
    private final KwikMeter meter = new KwikMeter(this);

    /** kwik's own controller: the fallback, and the whole behaviour for a stock arm. */
    private CongestionController stock;
    private volatile CongestionController delegate;
    private dev.ccagent.cc.CongestionController cc;
    private AgentConfig.Arm arm;
    private long bytesInFlight;
    /** Set under the monitor when a failing call switched to kwik's controller; consumed by fallBack. */
    private boolean failedOver;
    /** Handed to kwik's controller by a detach (not a failure of ours): its summary still names ours. */
    private boolean detached;
    /** Set when a telemetry hook failed: the counters stop for this connection. */
    private volatile boolean telemetryOff;

    // the packet being registered on the sender thread, and kwik's stamp of it (set by the LossDetector.packetSent advice)
    private QuicPacket stampedPacket;
    private Instant sendStamp;

    /** The send times of the packets of the ACK being processed (receiver thread; see {@link #takeSendTimes}). */
    private final KwikPacketTimes.Taken ackedSendTimes = new KwikPacketTimes.Taken();

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
    }

    void setStock(CongestionController stock) {
        this.stock = stock;
    }

    /** Whether the swap went through (kwik's controller is known, so a fallback can hand over to it). */
    boolean hasStock() {
        return stock != null;
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

    /** The algorithm in charge: ours, or {@code stock} (an arm that keeps kwik's, a fallback, or after a detach). */
    public synchronized String algorithm() {
        return delegate != null ? AgentConfig.STOCK : cc != null ? cc.algorithm() : "unassigned";
    }

    /**
     * Ours, when a detach handed the connection to kwik's controller (it ran ours until then); null otherwise
     * (ours in charge, a stock arm, or a fallback).
     */
    public synchronized String detachedFrom() {
        return detached && cc != null ? cc.algorithm() : null;
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
        long at = times.ackReceived(timeReceived, largestAcknowledged);
        meter.ackFrame(at, largestAcknowledged, ackDelayMillis);
        if (delegate != null) {
            return;
        }
        synchronized (this) {
            pendingAckTime = at;
            pendingAckDelay = Math.max(0, ackDelayMillis) * 1_000_000L;
            pendingLargestAcked = largestAcknowledged;
        }
    }

    // ------------------------------------------------------------------ kwik's interface

    /** Answer of an {@code ours*} method: the call belongs to kwik's controller (stock arm, fallback, detach). */
    private static final long TO_STOCK = Long.MIN_VALUE;

    /** kwik's sender thread is about to register {@code packet}, which it stamped {@code timeSent}. */
    void stampSent(QuicPacket packet, Instant timeSent) {
        stampedPacket = packet;
        sendStamp = timeSent;
    }

    /**
     * Our send time of {@code packet}: kwik's stamp converted while it is fresh, kept for the packet's
     * ACK ({@link KwikPacketTimes#sent}); now when no stamp was seen. Never throws.
     */
    private long sendTime(QuicPacket packet) {
        Instant stamp = packet == stampedPacket ? sendStamp : null;
        stampedPacket = null;
        sendStamp = null;
        try {
            return times.sent(KwikPacketTimes.key(packet), stamp);
        } catch (Throwable t) {
            return System.nanoTime(); // no entry: the ACK takes no RTT sample from this packet
        }
    }

    @Override
    public void registerInFlight(QuicPacket packet) {
        long sent = sendTime(packet);
        meter.sent(packet, sent);
        CongestionController d = delegate;
        if (d == null) {
            long inFlight;
            try {
                inFlight = oursInFlight(packet, sent);
            } catch (Throwable t) {
                inFlight = fallBack("registerInFlight", t);
            }
            if (inFlight != TO_STOCK) {
                listener.bytesInFlightIncreased(inFlight);
                return;
            }
            d = delegate;
        } else {
            countInFlight(packet);
        }
        d.registerInFlight(packet);
    }

    /** Our accounting; state is committed only after everything that could throw has run. */
    private synchronized long oursInFlight(QuicPacket packet, long sent) {
        try {
            if (delegate != null || !assigned()) {
                return TO_STOCK;
            }
            int size = packet.getSize();
            telemetry.packetInFlight(size);
            long after = bytesInFlight + size;
            if (packet.getPnSpace() == PnSpace.App) {
                cc.onPacketSent(sent, KwikReflection.packetNumber(packet), size, after, true);
            }
            bytesInFlight = after;
            return after;
        } catch (Throwable t) {
            failOverLocked();
            throw t;
        }
    }

    /** Send-path counter on kwik's controller (stock arm, after a fallback or detach). */
    private void countInFlight(QuicPacket packet) {
        if (!telemetryOff) {
            try {
                telemetry.packetInFlight(packet.getSize());
            } catch (Throwable t) {
                telemetryFailed(t);
            }
        }
    }

    @Override
    public void registerAcked(List<? extends PacketInfo> acked) {
        KwikPacketTimes.Taken sent = takeSendTimes(acked);
        meter.acked(acked, sent);
        CongestionController d = delegate;
        if (d == null) {
            long inFlight;
            try {
                inFlight = oursAcked(acked, sent);
            } catch (Throwable t) {
                inFlight = fallBack("registerAcked", t);
            }
            if (inFlight != TO_STOCK) {
                listener.bytesInFlightDecreased(inFlight);
                return;
            }
            d = delegate;
        }
        d.registerAcked(acked);
    }

    /**
     * The send times of the acknowledged packets, by their index in {@code acked}, taken out of the table
     * in one pass for both the meter and our controller; an index beyond the array has none. Only kwik's
     * receiver thread acknowledges packets, one ACK at a time, so one array serves every ACK. Never throws.
     */
    private KwikPacketTimes.Taken takeSendTimes(List<? extends PacketInfo> acked) {
        try {
            times.take(acked, ackedSendTimes);
        } catch (Throwable t) {
            ackedSendTimes.clear(); // this ACK's packets give no RTT sample; their entries give way later
        }
        return ackedSendTimes;
    }

    private synchronized long oursAcked(List<? extends PacketInfo> acked, KwikPacketTimes.Taken sendTimes) {
        try {
            if (delegate != null || !assigned()) {
                return TO_STOCK;
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
                    long recorded = sendTimes.at(i);
                    long sent = recorded != KwikPacketTimes.UNKNOWN ? Math.min(recorded, ackTime)
                            : times.converted(info.timeSent(), ackTime);
                    ev.addPacket(pn, sent, size);
                    if (pn == pendingLargestAcked && sendTimes.rttSample(i)) {
                        largestSent = sent; // a sample only from kwik's stamp, converted while trusted
                    }
                }
            }
            long after = Math.max(0, bytesInFlight - removed);
            boolean sample = largestSent != Long.MIN_VALUE;
            if (sample) {
                rtt.onSample(ackTime - largestSent, Math.min(pendingAckDelay, 25_000_000L));
            }
            ev.rtt(rtt, sample);
            ev.ackDelayNanos = pendingAckDelay;
            if (ev.count() > 0) {
                cc.onAck(ev);
                KwikTelemetry.afterUpdate(this, cc, after);
            }
            bytesInFlight = after;
            pendingAckTime = 0;
            pendingLargestAcked = -1;
            return after;
        } catch (Throwable t) {
            failOverLocked();
            throw t;
        }
    }

    @Override
    public void registerLost(List<? extends PacketInfo> lost) {
        meter.lost(lost);
        try {
            lostOnController(lost);
        } finally {
            times.forget(lost);
        }
    }

    private void lostOnController(List<? extends PacketInfo> lost) {
        CongestionController d = delegate;
        if (d == null) {
            long inFlight;
            try {
                inFlight = oursLost(lost);
            } catch (Throwable t) {
                inFlight = fallBack("registerLost", t);
            }
            if (inFlight != TO_STOCK) {
                listener.bytesInFlightDecreased(inFlight);
                return;
            }
            d = delegate;
        }
        d.registerLost(lost);
    }

    private synchronized long oursLost(List<? extends PacketInfo> lost) {
        try {
            if (delegate != null || !assigned()) {
                return TO_STOCK;
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
                    long pn = KwikReflection.packetNumber(p);
                    ev.addPacket(pn, times.sentTime(KwikPacketTimes.key(pn, PnSpace.App.ordinal()), info.timeSent(), now), size);
                }
            }
            long after = Math.max(0, bytesInFlight - removed);
            if (ev.count() > 0) {
                cc.onPacketsLost(ev);
                KwikTelemetry.afterUpdate(this, cc, after);
            }
            bytesInFlight = after;
            return after;
        } catch (Throwable t) {
            failOverLocked();
            throw t;
        }
    }

    @Override
    public void discard(List<? extends PacketInfo> discarded) {
        meter.discarded(discarded);
        try {
            discardOnController(discarded);
        } finally {
            times.forget(discarded);
        }
    }

    private void discardOnController(List<? extends PacketInfo> discarded) {
        CongestionController d = delegate;
        if (d == null) {
            long inFlight;
            try {
                inFlight = oursDiscard(discarded);
            } catch (Throwable t) {
                inFlight = fallBack("discard", t);
            }
            if (inFlight != TO_STOCK) {
                listener.bytesInFlightDecreased(inFlight);
                return;
            }
            d = delegate;
        }
        d.discard(discarded);
    }

    private synchronized long oursDiscard(List<? extends PacketInfo> discarded) {
        try {
            if (delegate != null) {
                return TO_STOCK;
            }
            long removed = 0;
            for (int i = 0, n = discarded.size(); i < n; i++) {
                removed += discarded.get(i).packet().getSize();
            }
            bytesInFlight = Math.max(0, bytesInFlight - removed);
            return bytesInFlight;
        } catch (Throwable t) {
            failOverLocked();
            throw t;
        }
    }

    @Override
    public boolean canSend(int bytes) {
        CongestionController d = delegate;
        if (d == null) {
            try {
                synchronized (this) {
                    try {
                        if (delegate == null) {
                            return cc == null || bytesInFlight + bytes < cc.congestionWindow();
                        }
                    } catch (Throwable t) {
                        failOverLocked();
                        throw t;
                    }
                }
            } catch (Throwable t) {
                fallBack("canSend", t);
            }
            d = delegate;
        }
        return d.canSend(bytes);
    }

    @Override
    public long getBytesInFlight() {
        CongestionController d = delegate;
        if (d != null) {
            return d.getBytesInFlight();
        }
        synchronized (this) {
            return delegate != null ? delegate.getBytesInFlight() : bytesInFlight;
        }
    }

    @Override
    public long getWindowSize() {
        CongestionController d = delegate;
        if (d == null) {
            try {
                synchronized (this) {
                    try {
                        if (delegate == null) {
                            return cc != null ? cc.congestionWindow() : 0;
                        }
                    } catch (Throwable t) {
                        failOverLocked();
                        throw t;
                    }
                }
            } catch (Throwable t) {
                fallBack("getWindowSize", t);
            }
            d = delegate;
        }
        return d.getWindowSize();
    }

    @Override
    public void reset() {
        meter.reset();
        CongestionController d = delegate;
        if (d == null) {
            synchronized (this) {
                if (delegate == null) {
                    bytesInFlight = 0;
                }
                d = delegate;
            }
            if (d == null) {
                listener.bytesInFlightDecreased(0);
                return;
            }
        }
        d.reset();
    }

    @Override
    public long remainingCwnd() {
        CongestionController d = delegate;
        if (d == null) {
            long r;
            try {
                r = oursRemaining();
            } catch (Throwable t) {
                r = fallBack("remainingCwnd", t);
            }
            if (r != TO_STOCK) {
                return r;
            }
            d = delegate;
        }
        long r = d.remainingCwnd();
        if (r <= 0 && !telemetryOff) {
            try {
                telemetry.windowRefused();
            } catch (Throwable t) {
                telemetryFailed(t);
            }
        }
        return r;
    }

    private synchronized long oursRemaining() {
        try {
            if (delegate != null || !assigned()) {
                return TO_STOCK;
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
        } catch (Throwable t) {
            failOverLocked();
            throw t;
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
        selector.runs(choice); // swapped in at creation already: the connection runs what is chosen now
        arm = choice.arm;
        if (choice.controller == null) {
            delegate = stock;
            return false;
        }
        cc = choice.controller;
        return true;
    }

    /**
     * Our code threw {@code cause} (any {@link Throwable}, see docs/safety.md): the connection
     * continues on kwik's own controller, handed our bytes in flight; counted and logged once per
     * connection. Never throws; the switch itself is a field write done before anything that could
     * fail (logging, JFR). Returns {@link #TO_STOCK} so that the caller re-runs the call on kwik's
     * controller.
     */
    long fallBack(String where, Throwable cause) {
        boolean first;
        synchronized (this) {
            first = switchLocked() || failedOver;
            failedOver = false;
        }
        if (first) {
            afterSwitch();
            try {
                KwikTelemetry.fellBack(this, where, cause);
            } catch (Throwable ignored) {
                // the event is lost; the fallback stands
            }
            try {
                dev.ccagent.cc.CongestionController c = cc;
                AgentRuntime.recordFallback("kwik " + (c != null ? c.algorithm() : "controller") + " " + where,
                        "this connection continues with the stock algorithm (kwik's own controller)", cause);
            } catch (Throwable ignored) {
                // not even a log line (out of memory): the fallback stands
            }
        }
        return TO_STOCK;
    }

    /**
     * Hands the connection to kwik's controller (detach): true for the call that switched it. Safe
     * from any thread; never throws.
     */
    @Override
    public boolean switchToStock() {
        boolean first;
        synchronized (this) {
            first = switchLocked();
            detached |= first;
        }
        if (first) {
            afterSwitch();
        }
        return first;
    }

    /**
     * Caller holds the monitor and is about to rethrow a failure of our code: no other thread may
     * call our controller again, so the switch happens before the monitor is released;
     * {@link #fallBack} then counts and logs it.
     */
    private void failOverLocked() {
        if (switchLocked()) {
            failedOver = true;
        }
    }

    /**
     * Caller holds the monitor: kwik's controller takes over, handed our bytes in flight. Never
     * throws; the switch itself (the write of {@code delegate}) follows a hand-over that catches
     * everything.
     *
     * <p>The count is handed over <em>before</em> {@code delegate} is published. A thread that reads
     * the published delegate calls kwik's controller directly, without our monitor; published first,
     * an ACK that kwik's receiver thread processed in between was subtracted from kwik's own count
     * (zero, clamped) and then overwritten by ours, which still held those bytes. kwik's controller
     * then counted packets in flight that kwik's recovery no longer had: with the count above its
     * window it never sent again, and with nothing in flight no timer fired, so the connection sat
     * until the idle timeout (KwikFailOpenTest's lost downloads; docs/testing.md). Our state is
     * guarded by the monitor we hold, so no ACK can change {@code bytesInFlight} while it is handed over.
     */
    private boolean switchLocked() {
        CongestionController s = stock;
        if (delegate != null || s == null) {
            return false;
        }
        try {
            KwikReflection.setStockBytesInFlight(s, bytesInFlight);
        } catch (Throwable ignored) {
            // best effort: kwik's controller then counts from its own (earlier) figure
        }
        delegate = s; // from here on every call goes to kwik's controller, which has our count
        return true;
    }

    /** After a switch, outside the monitor: no pending wake-up, and a waiting sender looks again. */
    private void afterSwitch() {
        try {
            WakeupTimer t = AgentRuntime.timerIfRunning();
            if (t != null) {
                t.cancel(wakeup);
            }
        } catch (Throwable ignored) {
            // a stale wake-up only wakes kwik's sender once more
        }
        try {
            listener.bytesInFlightDecreased(-1); // let a sender that waits for our pacer look again
        } catch (Throwable ignored) {
            // kwik's sender wakes on its own timeout
        }
    }

    /** True once kwik's controller is in charge of the connection. */
    public boolean onStock() {
        return delegate != null;
    }

    /** A send-path counter failed: counters stop for this connection, and our controller with them. */
    void telemetryFailed(Throwable cause) {
        telemetryOff = true;
        fallBack("telemetry", cause);
    }

    boolean telemetryOff() {
        return telemetryOff;
    }
}
