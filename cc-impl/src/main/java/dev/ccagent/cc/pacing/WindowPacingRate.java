package dev.ccagent.cc.pacing;

/**
 * A pacing rate for a window-based controller (Reno, CUBIC) that paces nothing itself, from the
 * window and smoothed RTT its host reports, as Linux paces TCP ({@code tcp_update_pacing_rate} in
 * {@code net/ipv4/tcp_input.c}: {@code rate = mss × cwnd / srtt}, × {@code tcp_pacing_ss_ratio} = 200%
 * in slow start, × {@code tcp_pacing_ca_ratio} = 120% after). The ratios leave the window, not the
 * pacer, in charge: in slow start the window doubles each round and the sender must be able to send
 * twice the window in it; after, 20% above the window's rate absorbs ACK jitter and timer lateness.
 *
 * <p>Linux calls it slow start while {@code cwnd < ssthresh / 2}. A host that reports only the window,
 * the RTT and its counters (quiche's path stats) shows no ssthresh, so the phase is read off how the
 * window grows for the bytes sent, one round (at least one smoothed RTT between two samples) at a time:
 * <ul>
 *   <li>slow start until the first round that ends otherwise;</li>
 *   <li>a loss ends slow start at once, and a round in which the window shrank ends it;</li>
 *   <li>a round in which the window grew is slow start when it grew by at least
 *       {@value #SLOW_START_GROWTH_PER_BYTE_SENT} of the bytes sent in it, else not. Slow start adds each
 *       acknowledged byte to the window, so the window grows by about half of what is sent (HyStart++'s
 *       conservative phase by a fifth: a quarter of each acknowledged byte); congestion avoidance adds one
 *       datagram per window acknowledged, a tenth or less of what is sent once the window holds ten
 *       datagrams;</li>
 *   <li>a round in which the window did not change at all (the sender was limited by the
 *       application, or in recovery) keeps the phase it had.</li>
 * </ul>
 * Per byte sent, not per unit of time: how much a window grows in a round depends on the rate the
 * pacer allows, and at 120% a slow start can grow by only about 1.2× a round. The rule before
 * 2026-12-07 (slow start while the window grew 1.5× a round) therefore confirmed itself: a slow start it
 * once judged over (a first round shorter than a real one, while the smoothed RTT was still low) was
 * paced at 120% and grew 1.2-1.4× a round to the first loss, where quiche's own slow start doubles
 * (measured: Reno's window 10, 13, 17, 25, 33, 48 datagrams about 55 ms apart, unpaced 10, 20, 40, 80).
 *
 * Before the host has an RTT sample (its smoothed RTT is still its initial guess) there is no rate: a
 * zero rate means "do not pace", as Linux does while {@code srtt_us} is 0.
 *
 * <p>Allocation free; not thread-safe (one per connection, fed on the connection's thread).
 */
public final class WindowPacingRate {

    /** Linux's {@code tcp_pacing_ss_ratio}: percent of the window's rate in slow start. */
    public static final int SLOW_START_PERCENT = 200;
    /** Linux's {@code tcp_pacing_ca_ratio}: percent of the window's rate after slow start. */
    public static final int AFTER_SLOW_START_PERCENT = 120;
    /** A lossless round in which the window grew by at least this share of the bytes sent in it is slow start. */
    public static final double SLOW_START_GROWTH_PER_BYTE_SENT = 0.15;

    private final long unknownRttNanos;
    private boolean slowStart = true;
    private long roundStart;
    private long roundCwnd;
    private long roundLost;
    private long roundSent;
    private boolean inRound;
    private long bytesPerSecond;

    /**
     * @param unknownRttNanos the smoothed RTT the host reports before its first RTT sample (quiche: its
     *                        initial RTT, 333 ms); 0 when the host reports 0 then
     */
    public WindowPacingRate(long unknownRttNanos) {
        this.unknownRttNanos = unknownRttNanos;
    }

    /** The rate for a window and smoothed RTT: bytes per second, 0 when either is unknown (≤ 0). */
    public static long rate(long cwndBytes, long srttNanos, boolean slowStart) {
        if (cwndBytes <= 0 || srttNanos <= 0) {
            return 0;
        }
        int percent = slowStart ? SLOW_START_PERCENT : AFTER_SLOW_START_PERCENT;
        // cwnd × percent ≤ 2^63 for any window below 46 PB; srtt in ns
        double r = (double) cwndBytes * percent / 100.0 * 1e9 / srttNanos;
        return r >= Long.MAX_VALUE ? Long.MAX_VALUE : Math.max(1, (long) r);
    }

    /**
     * One sample of the host's state: its window (bytes), smoothed RTT (ns), the packets it has declared
     * lost so far and the bytes it has sent so far (running counts). Returns the new rate, bytes per
     * second (0: do not pace).
     */
    public long onSample(long now, long cwndBytes, long srttNanos, long lostPackets, long sentBytes) {
        if (srttNanos <= 0 || srttNanos == unknownRttNanos || cwndBytes <= 0) {
            bytesPerSecond = 0;
            return 0;
        }
        if (!inRound) {
            inRound = true;
            startRound(now, cwndBytes, lostPackets, sentBytes);
        } else if (lostPackets > roundLost) {
            // a loss ends slow start at once (Linux: ssthresh drops to the reduced window)
            slowStart = false;
            startRound(now, cwndBytes, lostPackets, sentBytes);
        } else if (now - roundStart >= srttNanos) {
            if (cwndBytes < roundCwnd) {
                slowStart = false;
            } else if (cwndBytes > roundCwnd) {
                long sent = sentBytes - roundSent;
                slowStart = sent <= 0 || cwndBytes - roundCwnd >= SLOW_START_GROWTH_PER_BYTE_SENT * sent;
            }
            startRound(now, cwndBytes, lostPackets, sentBytes);
        }
        bytesPerSecond = rate(cwndBytes, srttNanos, slowStart);
        return bytesPerSecond;
    }

    private void startRound(long now, long cwndBytes, long lostPackets, long sentBytes) {
        roundStart = now;
        roundCwnd = cwndBytes;
        roundLost = lostPackets;
        roundSent = sentBytes;
    }

    /** The rate of the last sample, bytes per second; 0 when there is none (do not pace). */
    public long bytesPerSecond() {
        return bytesPerSecond;
    }

    /** Whether the last sample counted as slow start (200%) rather than after it (120%). */
    public boolean slowStart() {
        return slowStart;
    }
}
