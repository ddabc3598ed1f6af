package dev.ccagent.cc.reno;

import dev.ccagent.cc.AlgorithmDescriptor;
import dev.ccagent.cc.CcOptions;
import dev.ccagent.cc.OptionSpec;

import java.util.List;

/**
 * Reno for high bandwidth-delay paths, after the current "pico" congestion controller of
 * h2o/quicly ({@code lib/cc-pico.c}: {@code pico_bytes_per_mtu_increase}, {@code pico_on_lost},
 * {@code pico_on_acked}); written for this project, not translated.
 *
 * <p><b>Why.</b> Classic Reno adds one MSS per window acknowledged. Regaining the
 * {@code (1−β)·W} lost at a congestion event takes {@code (1−β)·W/mss} round trips: with
 * W = 1000 packets at 300 ms that is 90 s.
 *
 * <p><b>The rule (quicly's revision of pico, issue #15).</b> Once per congestion event, from the
 * window before the reduction ("BDP": the pre-loss window; half of it when the loss ends slow
 * start, which overshoots 2×) and the smoothed RTT at that moment, compute how many acked bytes
 * buy one MSS of growth in the coming epoch, as the smaller of
 * <pre>
 *   Reno:  β·BDP                                  (one MSS per post-loss window)
 *   CUBIC: 1.2937 / (1 − β) · K / srtt · mss,      K = ∛((1 − β)/0.4 · BDP/mss) seconds
 * </pre>
 * i.e. the faster of Reno's and CUBIC's recovery periods (1.2937 amortises CUBIC's fast-
 * convergence epochs). The value stays fixed until the next congestion event: queueing delay
 * during the epoch no longer speeds growth up, which made the 2021 form (increase recomputed on
 * every ACK from the current srtt, regaining the window in ~1 s at any RTT) take 87% of a
 * 100 Mbit/s, 200 ms link from CUBIC. Growth happens only while the window is in use
 * ({@link WindowedController}: no growth while application limited). The option
 * {@value #OPT_ONE_SECOND}{@code =on} keeps the 2021 one-second period instead of CUBIC's, but
 * still computed once per loss event.
 *
 * <p><b>Decrease.</b> {@code cwnd·β} (β = 0.7, option {@value #OPT_BETA}) once per recovery
 * period; the loss that ends slow start halves the window (quicly: the 1-RTT-late loss signal
 * means slow start overshot by 2×). Floored at the minimum window.
 *
 * <p>No allocation on any per-packet path.
 */
public final class HighBdpReno extends WindowedController {

    public static final String NAME = "reno-hbdp";
    /** Loss reduction factor (quicly's QUICLY_BETA_LOSS). */
    public static final double DEFAULT_BETA = 0.7;
    /** Reduction when a loss ends slow start (quicly: 0.5). */
    public static final double SLOW_START_EXIT_BETA = 0.5;
    /** The 2021 form's recovery period (option period=1s). */
    public static final double RECOVERY_PERIOD_SECONDS = 1.0;
    /** CUBIC's C. */
    private static final double CUBIC_C = 0.4;
    /** quicly's amortisation of fast-convergence epochs: (1 + 2·0.5^(1/3)) / 2. */
    private static final double FAST_CONVERGENCE_FACTOR = 1.293700525984;

    public static final String OPT_BETA = "beta";
    public static final String OPT_ONE_SECOND = "one-second-period";

    public static final AlgorithmDescriptor DESCRIPTOR = new AlgorithmDescriptor(NAME,
            "Reno with CUBIC-like recovery period for high-BDP paths (after quicly's pico)",
            List.of(OptionSpec.decimal(OPT_BETA, 0, true, 0.99, "0.7", "loss reduction factor"),
                    OptionSpec.bool(OPT_ONE_SECOND, "off",
                            "regain the window in about one second (pico's 2021 form) instead of min(Reno, CUBIC) periods")),
            HighBdpReno::new);

    private final double beta;
    private final boolean oneSecond;
    /** Acked bytes that buy one MSS of growth in this epoch (fixed per congestion event). */
    private double bytesPerMssIncrease;
    /** Acked bytes in congestion avoidance not yet turned into window growth. */
    private double stash;

    public HighBdpReno(CcOptions options) {
        super(options);
        this.beta = options.getDouble(OPT_BETA);
        this.oneSecond = options.getBoolean(OPT_ONE_SECOND);
        this.bytesPerMssIncrease = cwnd * beta; // quicly pico_init_pico_state
    }

    @Override
    protected void onCongestionAvoidanceAck(long ackedBytes, long ackTimeNanos) {
        stash += ackedBytes;
        if (stash < bytesPerMssIncrease) {
            return;
        }
        long steps = (long) (stash / bytesPerMssIncrease);
        cwnd += steps * mss;
        stash -= steps * bytesPerMssIncrease;
    }

    /** Acked bytes per MSS of growth, from the pre-loss window estimate and the srtt at the loss. */
    double bytesPerMssIncrease(long bdp, long rttNanos) {
        double reno = beta * bdp;
        double rttSeconds = Math.max(rttNanos, 1) / 1e9;
        double other;
        if (oneSecond) {
            other = mss / ((1 / beta - 1) * rttSeconds / RECOVERY_PERIOD_SECONDS);
        } else {
            double k = Math.cbrt((1 - beta) / CUBIC_C * bdp / mss);
            other = FAST_CONVERGENCE_FACTOR / (1 - beta) * k / rttSeconds * mss;
        }
        return Math.max(1, Math.min(reno, other));
    }

    /** The window growth one acked byte buys in congestion avoidance in this epoch. */
    public double increasePerAckedByte() {
        return mss / bytesPerMssIncrease;
    }

    @Override
    protected void onCongestionEvent(long nowNanos) {
        boolean exitingSlowStart = ssthresh == Long.MAX_VALUE;
        long bdp = exitingSlowStart ? Math.max(cwnd / 2, minWindow) : cwnd;
        double factor = exitingSlowStart ? SLOW_START_EXIT_BETA : beta;
        cwnd = Math.max((long) (cwnd * factor), minWindow);
        ssthresh = cwnd;
        bytesPerMssIncrease = bytesPerMssIncrease(bdp, rtt());
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
