package dev.ccagent.cc.bbr;

import dev.ccagent.cc.AckEvent;
import dev.ccagent.cc.CcSnapshot;
import dev.ccagent.cc.CongestionController;
import dev.ccagent.cc.LossEvent;
import dev.ccagent.cc.RttEstimator;

import java.util.ArrayDeque;
import java.util.function.Consumer;

/**
 * A minimal deterministic path for unit tests of the controllers: one FIFO bottleneck of a fixed
 * rate with a drop-tail buffer, a fixed base RTT, one ACK per packet, and a lost packet declared
 * lost when a later packet is acknowledged. It checks the pacer invariants on every send decision
 * (never a time in the past, bounded sends per instant), so any test using it also guards against
 * the localhost spin. The full simulator lives in {@code dev.ccagent.sim}.
 *
 * <p>Its clock is simulated and nothing in it draws at random (a BBR's own draws come from its seed
 * option, 1 by default): a test on it gets the same figures every run, so its bounds fail with odds 0.
 */
final class PipeHarness {

    static final int MSS = 1200;

    final CongestionController cc;
    final long rateBytesPerSecond;
    final long rttNanos;
    final long bufferBytes;
    final RttEstimator rtt = new RttEstimator(333_000_000L);
    final AckEvent ack = new AckEvent();
    final LossEvent loss = new LossEvent();
    final CcSnapshot snap = new CcSnapshot();

    long now;
    long nextPn;
    long inflight;
    long linkFreeAt;
    long sent;
    long lost;
    long deliveredBytes;
    /** Stop sending (app limited) while this returns false. */
    java.util.function.LongPredicate hasData = t -> true;
    private boolean appLimitedSignalled;
    int maxSendsAtOneInstant;
    private long lastSendInstant = -1;
    private int sendsThisInstant;

    /** Each entry: {pn, sentTime, ackArrival (or -1 when dropped)}. */
    private final ArrayDeque<long[]> flight = new ArrayDeque<>();

    PipeHarness(CongestionController cc, long rateBitsPerSecond, long rttNanos, long bufferBytes) {
        this.cc = cc;
        this.rateBytesPerSecond = rateBitsPerSecond / 8;
        this.rttNanos = rttNanos;
        this.bufferBytes = bufferBytes;
    }

    /**
     * The same sender and state on a path whose bottleneck rate changes now: a new harness that
     * shares the controller, continues the clock and packet numbers, and first drains what is
     * in flight on the old path (delivered at the old rate).
     */
    PipeHarness withRate(long rateBitsPerSecond) {
        PipeHarness h = new PipeHarness(cc, rateBitsPerSecond, rttNanos, bufferBytes);
        h.now = now;
        h.nextPn = nextPn;
        h.inflight = inflight;
        h.linkFreeAt = linkFreeAt;
        h.flight.addAll(flight);
        h.hasData = hasData;
        h.rtt.onSample(rtt.smoothedRtt(), 0);
        return h;
    }

    /** Runs until {@code until}, calling {@code probe} after every event. */
    void run(long until, Consumer<PipeHarness> probe) {
        while (now < until) {
            long tAck = nextAckTime();
            long tSend = Long.MAX_VALUE;
            boolean data = hasData.test(now);
            if (!data && !appLimitedSignalled) {
                cc.onAppLimited(now, inflight);
                appLimitedSignalled = true;
            }
            if (data && cc.canSend(inflight)) {
                long e = cc.earliestSendTime(now, MSS);
                if (e < now) {
                    throw new AssertionError("earliestSendTime " + e + " before now " + now);
                }
                tSend = e;
            }
            long t = Math.min(tAck, tSend);
            if (t == Long.MAX_VALUE) {
                // idle: nothing to ack, nothing allowed; jump a millisecond (app-limited waits)
                now = Math.min(until, now + 1_000_000L);
                continue;
            }
            if (t > until) {
                now = until;
                break;
            }
            now = t;
            if (tSend <= tAck) {
                send();
            } else {
                deliverAcks();
            }
            if (probe != null) {
                probe.accept(this);
            }
        }
    }

    private long nextAckTime() {
        for (long[] p : flight) {
            if (p[2] >= 0) {
                return p[2];
            }
        }
        return Long.MAX_VALUE;
    }

    private void send() {
        if (now == lastSendInstant) {
            sendsThisInstant++;
        } else {
            lastSendInstant = now;
            sendsThisInstant = 1;
        }
        maxSendsAtOneInstant = Math.max(maxSendsAtOneInstant, sendsThisInstant);
        if (sendsThisInstant > 10_000) {
            throw new AssertionError("spin: " + sendsThisInstant + " sends at one instant");
        }
        appLimitedSignalled = false;
        long pn = nextPn++;
        inflight += MSS;
        sent++;
        cc.onPacketSent(now, pn, MSS, inflight, true);
        long start = Math.max(now, linkFreeAt);
        long queued = (long) ((start - now) * (rateBytesPerSecond / 1e9));
        long ackAt;
        if (queued + MSS > bufferBytes + MSS) {
            ackAt = -1; // tail drop
        } else {
            long serialise = (long) Math.ceil(MSS * 1e9 / rateBytesPerSecond);
            linkFreeAt = start + serialise;
            ackAt = linkFreeAt + rttNanos;
        }
        flight.addLast(new long[] {pn, now, ackAt});
    }

    private void deliverAcks() {
        // every packet before the first one arriving now that was dropped is lost
        loss.reset(now, inflight);
        ack.reset(now, 0);
        while (!flight.isEmpty()) {
            long[] p = flight.peekFirst();
            if (p[2] < 0) {
                flight.pollFirst();
                loss.addPacket(p[0], p[1], MSS);
                continue;
            }
            if (p[2] > now) {
                break;
            }
            flight.pollFirst();
            ack.addPacket(p[0], p[1], MSS);
        }
        if (loss.count() > 0) {
            lost += loss.count();
            cc.onPacketsLost(loss);
            inflight -= (long) loss.count() * MSS;
        }
        if (ack.count() > 0) {
            int largest = ack.indexOfLargest();
            rtt.onSample(now - ack.sentTime(largest), 0);
            ack.priorBytesInFlight = inflight;
            ack.rtt(rtt, true);
            cc.onAck(ack);
            inflight -= ack.totalBytes();
            deliveredBytes += ack.totalBytes();
        }
    }

    CcSnapshot snapshot() {
        return cc.snapshot(snap);
    }
}
