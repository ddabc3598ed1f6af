package dev.ccagent.cc.reno;

import dev.ccagent.cc.AlgorithmDescriptor;
import dev.ccagent.cc.CcOptions;
import dev.ccagent.cc.OptionSpec;

import java.util.List;

/**
 * Reno for high bandwidth-delay paths: a loss costs about one second of reduced window, whatever
 * the RTT. After the "pico" congestion controller of h2o/quicly ({@code lib/cc-pico.c}, Kazuho
 * Oku, 2021), in the form it had before it was re-tuned to mimic CUBIC's period (quicly commits
 * 51edf39e "implement pico cc" and e9ac4653/37bf413a: increase per acked byte
 * {@code (1/β − 1) × 1 Hz × RTT}, β = 0.7); see also the "High-BDP Reno" section of
 * {@code shared/reference/cc-anchors.md}.
 *
 * <p><b>Why.</b> Classic Reno adds one MSS per window acknowledged, i.e. one MSS per round trip.
 * Regaining the {@code (1−β)·W} lost at a congestion event therefore takes {@code (1−β)·W/mss}
 * round trips: with W = 1000 packets at 300 ms that is 90 s, so on long fat paths Reno never
 * gets back to its previous window between random losses (quicly measured Tokyo→US West, 300 ms:
 * ordinary Reno never recovered within 15 s).
 *
 * <p><b>The rule.</b> In congestion avoidance every newly acknowledged byte may grow the window by
 * <pre>
 *   increasePerAckedByte = max( mss / cwnd,                         (classic Reno: 1 MSS per cwnd)
 *                               min( 1, (1/β − 1) · srtt_seconds / {@value #RECOVERY_PERIOD_SECONDS} s ) )
 * </pre>
 * Acked bytes go into a stash; once {@code stash × increasePerAckedByte} amounts to at least one
 * MSS, the window grows by that many whole MSS and the stash gives up the bytes that paid for them
 * ({@code mss / increasePerAckedByte} each). A large ACK therefore feeds the whole stash at once
 * and can add several MSS in one step; rounding never loses credit.
 *
 * <p><b>Why it takes about a second.</b> In one RTT about one window is acked, so the window grows
 * by {@code cwnd·(1/β − 1)·srtt} per RTT, i.e. at {@code cwnd·(1/β − 1)} bytes per second, a rate
 * that does not depend on the RTT. Starting from {@code β·W} that is {@code W·(1 − β)} per second,
 * exactly the amount lost (compounding makes it ≈ 0.85 s; the recovery round trip, which never
 * grows the window, comes on top). The {@code min(1, …)} keeps growth at or below slow start's
 * (the increase never exceeds the acked bytes, relevant above ~2.3 s RTT); the {@code max} with
 * Reno's rate keeps small-window, short-RTT connections at least as aggressive as Reno. quicly
 * summed the two terms; taking the larger is equivalent where either dominates and never exceeds
 * slow start.
 *
 * <p><b>Decrease.</b> {@code ssthresh = cwnd·β} (β = 0.7, option {@value #OPT_BETA}), once per
 * recovery period, floored at the minimum window; the first loss out of slow start uses the same
 * β (quicly uses 0.5 there). Persistent congestion, recovery periods, app-limited handling and
 * pacing come from {@link WindowedController}.
 *
 * <p>No allocation on any per-packet path.
 */
public final class HighBdpReno extends WindowedController {

    public static final String NAME = "reno-hbdp";
    /** Loss reduction factor (quicly's QUICLY_RENO_BETA). */
    public static final double DEFAULT_BETA = 0.7;
    /** The time in which the window should regain its pre-loss size (quicly: 1 Hz). */
    public static final double RECOVERY_PERIOD_SECONDS = 1.0;

    public static final String OPT_BETA = "beta";

    public static final AlgorithmDescriptor DESCRIPTOR = new AlgorithmDescriptor(NAME,
            "Reno with RTT-independent recovery for high-BDP paths (after quicly's pico)",
            List.of(OptionSpec.decimal(OPT_BETA, 0, true, 0.99, "0.7", "loss reduction factor")),
            HighBdpReno::new);

    private final double beta;
    /** (1/β − 1) / recovery period: growth per acked byte per second of RTT. */
    private final double increasePerByteAndRttSecond;
    /** Acked bytes in congestion avoidance not yet turned into window growth. */
    private double stash;

    public HighBdpReno(CcOptions options) {
        super(options);
        this.beta = options.getDouble(OPT_BETA);
        this.increasePerByteAndRttSecond = (1 / beta - 1) / RECOVERY_PERIOD_SECONDS;
    }

    @Override
    protected void onCongestionAvoidanceAck(long ackedBytes, long ackTimeNanos) {
        stash += ackedBytes;
        double perByte = increasePerAckedByte();
        double stashPerMss = mss / perByte; // >= mss, since perByte <= 1
        if (stash < stashPerMss) {
            return;
        }
        long steps = (long) (stash / stashPerMss);
        cwnd += steps * mss;
        stash -= steps * stashPerMss;
    }

    /** The window growth one acked byte buys in congestion avoidance right now (see class doc). */
    public double increasePerAckedByte() {
        double multiplicative = Math.min(1.0, increasePerByteAndRttSecond * (rtt() / 1e9));
        double reno = (double) mss / cwnd;
        return Math.max(reno, multiplicative);
    }

    @Override
    protected void onCongestionEvent(long nowNanos) {
        ssthresh = Math.max((long) (cwnd * beta), minWindow);
        cwnd = ssthresh;
        stash = 0;
    }

    @Override
    protected void onPersistentCongestion(long nowNanos) {
        stash = 0;
    }

    /** Bytes acked in congestion avoidance not yet converted into growth. */
    public double stash() {
        return stash;
    }
}
