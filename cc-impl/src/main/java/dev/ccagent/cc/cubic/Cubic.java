package dev.ccagent.cc.cubic;

import dev.ccagent.cc.AlgorithmDescriptor;
import dev.ccagent.cc.CcOptions;
import dev.ccagent.cc.OptionSpec;
import dev.ccagent.cc.reno.WindowedController;

import java.util.List;

/**
 * CUBIC as RFC 9438 specifies it, on the loss-based frame of {@link WindowedController} (slow
 * start, RFC 9002 recovery periods, persistent congestion, app-limited handling and pacing come
 * from there).
 *
 * <p><b>Why CUBIC.</b> Reno adds one segment per round trip, so on a path with a large
 * bandwidth-delay product it needs thousands of round trips to refill the window after a loss.
 * CUBIC grows as a function of <em>time</em> since the last congestion event instead, which makes
 * its recovery largely independent of the RTT, and grows slowly near the window at which the last
 * loss happened (W_max), where the next loss is likely.
 *
 * <p><b>The curve</b> (§4.2), in bytes ({@code segments = bytes / mss}):
 * <pre>
 *   W_cubic(t) = C·mss·(t − K)³ + W_max          C = 0.4
 *   K          = ∛((W_max − cwnd_epoch) / mss / C)
 * </pre>
 * where {@code t} is the time in seconds since the start of the current congestion-avoidance
 * epoch and {@code cwnd_epoch} the window at that start. After an ordinary loss
 * {@code cwnd_epoch = β·W_max}, so K reduces to the classic {@code ∛(W_max(1−β)/C)}; the RFC's
 * general form keeps the curve continuous ({@code W_cubic(0) = cwnd_epoch}) also after fast
 * convergence and after the minimum-window clamp. On each ack in congestion avoidance the window
 * moves toward {@code target = W_cubic(t + RTT)} (smoothed RTT: where the curve will be when this
 * ack's successors return), clamped to {@code [cwnd, 1.5·cwnd]}, by
 * {@code (target − cwnd)·ackedBytes/cwnd}.
 *
 * <p><b>Reno-friendly region</b> (§4.3): an estimate of what Reno would have, {@code W_est},
 * starts at {@code cwnd_epoch} and grows by {@code α·mss·ackedBytes/cwnd} with
 * {@code α = 3(1−β)/(1+β)} (1 once {@code W_est} has reached the window before the last
 * reduction). While {@code W_cubic(t) < W_est} the window follows {@code W_est}; this is where
 * CUBIC spends its time on short-RTT / small-BDP paths, so it is never less aggressive than Reno.
 *
 * <p><b>Congestion event</b> (§4.6, §4.7): {@code W_max = cwnd}, or with fast convergence (option
 * {@value #OPT_FAST_CONVERGENCE}, on by default) {@code W_max = cwnd·(1+β)/2} when the window did
 * not get back to the previous W_max (a new flow is taking bandwidth: give some up sooner);
 * {@code ssthresh = cwnd·β}, {@code cwnd = max(ssthresh, 2·mss)}. The reduction uses the window
 * rather than the bytes in flight, as quiche and quicly do for QUIC. The epoch restarts at the
 * first congestion-avoidance ack after the event, so the recovery period does not count as curve
 * time. The first loss out of slow start also uses β (no 0.5 overshoot factor).
 *
 * <p><b>Persistent congestion</b> (§4.8, the RTO analogue): the frame collapses the window to the
 * minimum; the next epoch starts with {@code K = 0} and {@code W_max = W_est = cwnd_epoch}, so growth
 * after slow start resumes gently from wherever slow start ended. Slow-start exit without loss is
 * handled the same way (§4.10).
 *
 * <p><b>Idle and application-limited periods</b> (§5.8; Linux commit 30927520): acks that may not
 * grow the window (the frame withholds them while the sender is application limited) do not reach
 * this class, and none arrive while the connection is idle. If the gap between two growth acks is
 * longer than {@value #IDLE_GAP_RTTS} smoothed RTTs, the ack clock was interrupted and the excess
 * is added to the epoch start: the curve keeps its shape and is shifted later in time instead of
 * jumping ahead (which would otherwise allow 1.5× growth per ack round after any pause).
 *
 * <p>Every per-ack path is arithmetic on primitive fields: no allocation.
 */
public final class Cubic extends WindowedController {

    public static final String NAME = "cubic";
    /** The scaling constant C of RFC 9438 §5.1, segments per second cubed. */
    public static final double C = 0.4;
    /** β_cubic, RFC 9438 §4.6. */
    public static final double DEFAULT_BETA = 0.7;
    /** Most the target may exceed the current window (RFC 9438 §4.2). */
    public static final double MAX_TARGET_RATIO = 1.5;
    /** An ack gap longer than this many smoothed RTTs counts as idle/app-limited time. */
    public static final int IDLE_GAP_RTTS = 2;

    public static final String OPT_BETA = "beta";
    public static final String OPT_FAST_CONVERGENCE = "fast-convergence";

    public static final AlgorithmDescriptor DESCRIPTOR = new AlgorithmDescriptor(NAME,
            "CUBIC, RFC 9438",
            List.of(OptionSpec.decimal(OPT_BETA, 0, true, 0.99, "0.7",
                            "multiplicative decrease factor β_cubic"),
                    OptionSpec.bool(OPT_FAST_CONVERGENCE, "on",
                            "lower W_max to cwnd·(1+β)/2 when a loss comes before the previous W_max")),
            Cubic::new);

    private static final long NO_EPOCH = Long.MIN_VALUE;

    private final double beta;
    private final boolean fastConvergence;
    /** α_cubic = 3(1−β)/(1+β): Reno's average rate with CUBIC's gentler decrease. */
    private final double renoFriendlyAlpha;

    /** Start of the current congestion-avoidance epoch (shifted by idle time); NO_EPOCH: none. */
    private long epochStart = NO_EPOCH;
    /** Last ack that was allowed to grow the window, for idle-gap detection. */
    private long lastGrowthAck;
    /** W_max in bytes; 0 when unknown (start, or after persistent congestion). */
    private double wMax;
    /** K in seconds for the current epoch. */
    private double k;
    /** W_est in bytes, the Reno-friendly estimate. */
    private double wEst;
    /** The window just before the last reduction (cwnd_prior), bytes. */
    private double cwndPrior;
    /** Fractional bytes of growth not yet added to the (integral) window. */
    private double growthRemainder;

    public Cubic(CcOptions options) {
        super(options);
        this.beta = options.getDouble(OPT_BETA);
        this.fastConvergence = options.getBoolean(OPT_FAST_CONVERGENCE);
        this.renoFriendlyAlpha = 3 * (1 - beta) / (1 + beta);
    }

    @Override
    protected void onCongestionAvoidanceAck(long ackedBytes, long ackTimeNanos) {
        if (epochStart == NO_EPOCH) {
            startEpoch(ackTimeNanos);
        } else {
            skipIdleGap(ackTimeNanos);
        }
        double window = cwnd;

        double alpha = wEst >= cwndPrior ? 1.0 : renoFriendlyAlpha;
        wEst += alpha * mss * ackedBytes / window;

        double t = (ackTimeNanos - epochStart) / 1e9;
        if (wCubic(t) < wEst) {
            // Reno-friendly region: follow Reno's estimate; never shrink if W_est dipped below.
            if (wEst > window) {
                cwnd = (long) wEst;
                growthRemainder = 0;
            }
            return;
        }
        double target = wCubic(t + rtt() / 1e9);
        if (target < window) {
            target = window;
        } else if (target > MAX_TARGET_RATIO * window) {
            target = MAX_TARGET_RATIO * window;
        }
        double growth = (target - window) * ackedBytes / window + growthRemainder;
        long whole = (long) growth;
        cwnd += whole;
        growthRemainder = growth - whole;
    }

    @Override
    protected void onCongestionEvent(long nowNanos) {
        cwndPrior = cwnd;
        if (fastConvergence && cwnd < wMax) {
            wMax = cwnd * (1 + beta) / 2;
        } else {
            wMax = cwnd;
        }
        ssthresh = Math.max((long) (cwnd * beta), minWindow);
        cwnd = ssthresh;
        epochStart = NO_EPOCH;
        growthRemainder = 0;
    }

    @Override
    protected void onPersistentCongestion(long nowNanos) {
        wMax = 0; // next epoch: K = 0, W_max = cwnd_epoch (RFC 9438 §4.8)
        epochStart = NO_EPOCH;
        growthRemainder = 0;
    }

    private void startEpoch(long nowNanos) {
        epochStart = nowNanos;
        lastGrowthAck = nowNanos;
        double cwndEpoch = cwnd;
        if (wMax <= cwndEpoch) {
            // No loss above us to approach (after persistent congestion or a loss-free slow-start
            // exit): start on the plateau and probe upward from here.
            wMax = cwndEpoch;
            k = 0;
        } else {
            k = Math.cbrt((wMax - cwndEpoch) / mss / C);
        }
        wEst = cwndEpoch;
        if (cwndPrior < cwndEpoch) {
            cwndPrior = cwndEpoch;
        }
        growthRemainder = 0;
    }

    private void skipIdleGap(long ackTimeNanos) {
        long gap = ackTimeNanos - lastGrowthAck;
        long allowed = IDLE_GAP_RTTS * rtt();
        if (gap > allowed) {
            epochStart += gap - allowed;
        }
        lastGrowthAck = Math.max(lastGrowthAck, ackTimeNanos);
    }

    /** W_cubic(t) in bytes for the current epoch, {@code t} in seconds since the epoch start. */
    public double wCubic(double tSeconds) {
        double d = tSeconds - k;
        return C * mss * d * d * d + wMax;
    }

    /** W_max in bytes (0 before the first congestion event). */
    public double wMax() {
        return wMax;
    }

    /** K in seconds of the current epoch (meaningful once an epoch has started). */
    public double k() {
        return k;
    }

    /** The Reno-friendly estimate W_est in bytes. */
    public double renoEstimate() {
        return wEst;
    }

    /** Whether a congestion-avoidance epoch is running. */
    public boolean epochStarted() {
        return epochStart != NO_EPOCH;
    }

    /** Start of the current epoch in nanoseconds, including idle shifts; only if {@link #epochStarted()}. */
    public long epochStartNanos() {
        return epochStart;
    }

    public double beta() {
        return beta;
    }
}
