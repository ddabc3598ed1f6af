package dev.ccagent.cc.pacing;

/**
 * A pacing rate for a window-based controller (Reno, CUBIC) that paces nothing itself, from the
 * window and smoothed RTT its host reports, as Linux paces TCP ({@code tcp_update_pacing_rate} in
 * {@code net/ipv4/tcp_input.c}: {@code rate = mss × cwnd / srtt}, × {@code tcp_pacing_ss_ratio} = 200%
 * in slow start, × {@code tcp_pacing_ca_ratio} = 120% after). The ratios leave the window, not the
 * pacer, in charge: in slow start the window doubles each round and the sender must be able to send
 * twice the window in it; after, 20% above the window's rate absorbs ACK jitter and timer lateness.
 *
 * <p>Linux calls it slow start while {@code cwnd < ssthresh / 2}. A host that reports only the window
 * and the RTT (quiche's path stats) shows no ssthresh, so the phase is read off the window itself, one
 * round (at least one smoothed RTT between two samples) at a time:
 * <ul>
 *   <li>slow start until the first round that ends otherwise;</li>
 *   <li>a round in which a packet was lost, the window shrank, or it grew by less than
 *       {@value #SLOW_START_GROWTH}× (congestion avoidance grows it by one packet per round, CUBIC's
 *       and HyStart++'s conservative phase by at most 1.25×) ends slow start;</li>
 *   <li>a round without loss in which the window grew by {@value #SLOW_START_GROWTH}× or more
 *       (slow start doubles it) starts it again (as after quiche's persistent-congestion reset);</li>
 *   <li>a round in which the window did not change at all (the sender was limited by the
 *       application, or in recovery) keeps the phase it had.</li>
 * </ul>
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
    /** A lossless round in which the window grew by this factor or more is slow start. */
    public static final double SLOW_START_GROWTH = 1.5;

    private final long unknownRttNanos;
    private boolean slowStart = true;
    private long roundStart;
    private long roundCwnd;
    private long roundLost;
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
     * One sample of the host's state: its window (bytes), smoothed RTT (ns) and the packets it has
     * declared lost so far (a running count). Returns the new rate, bytes per second (0: do not pace).
     */
    public long onSample(long now, long cwndBytes, long srttNanos, long lostPackets) {
        if (srttNanos <= 0 || srttNanos == unknownRttNanos || cwndBytes <= 0) {
            bytesPerSecond = 0;
            return 0;
        }
        if (!inRound) {
            inRound = true;
            roundStart = now;
            roundCwnd = cwndBytes;
            roundLost = lostPackets;
        } else if (lostPackets > roundLost) {
            // a loss ends slow start at once (Linux: ssthresh drops to the reduced window)
            slowStart = false;
            startRound(now, cwndBytes, lostPackets);
        } else if (now - roundStart >= srttNanos) {
            if (cwndBytes < roundCwnd) {
                slowStart = false;
            } else if (cwndBytes > roundCwnd) {
                slowStart = cwndBytes >= SLOW_START_GROWTH * roundCwnd;
            }
            startRound(now, cwndBytes, lostPackets);
        }
        bytesPerSecond = rate(cwndBytes, srttNanos, slowStart);
        return bytesPerSecond;
    }

    private void startRound(long now, long cwndBytes, long lostPackets) {
        roundStart = now;
        roundCwnd = cwndBytes;
        roundLost = lostPackets;
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
