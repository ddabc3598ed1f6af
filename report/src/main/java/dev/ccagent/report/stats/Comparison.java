package dev.ccagent.report.stats;

/**
 * One metric of one canary arm against the baseline arm: ratio of medians with a bootstrap confidence
 * interval, a two-sided Mann-Whitney test, and a verdict.
 *
 * <p>The verdict is "better" or "worse" only when the Mann-Whitney p-value is below {@code alpha}
 * (the caller passes 0.05 divided by the number of tests in the report: Bonferroni, so that an A/A
 * run invents no winner in any metric more than 5% of the time) AND the 95% interval of the ratio lies
 * entirely on one side of 1, in the same direction. With fewer than {@link #MIN_PER_ARM} connections in
 * either arm it is "not enough data"; otherwise "no detectable difference". Either way the
 * connections per arm needed to detect a {@link #EFFECT} change at 80% power are estimated.
 */
public final class Comparison {

    /** Below this many connections in either arm the verdict is "not enough data". */
    public static final int MIN_PER_ARM = 8;
    /** Family-wise significance level of a report. */
    public static final double ALPHA = 0.05;
    /** Confidence level of the interval. */
    public static final double CONFIDENCE = 0.95;
    /** The change worth detecting for the sample-size estimate: 10%. */
    public static final double EFFECT = 0.10;
    /** Power of the sample-size estimate. */
    public static final double POWER = 0.8;

    public enum Verdict {
        BETTER("better"), WORSE("worse"), NO_DIFFERENCE("no detectable difference"), NOT_ENOUGH_DATA("not enough data");

        public final String text;

        Verdict(String text) {
            this.text = text;
        }
    }

    public final String metric;
    public final boolean higherIsBetter;
    public final int nArm;
    public final int nBaseline;
    public final double medianArm;
    public final double medianBaseline;
    /** Null when either group is empty. */
    public final Bootstrap.Interval interval;
    public final MannWhitney.Result test;
    public final double alpha;
    public final Verdict verdict;
    /** Connections per arm to detect a 10% change; -1 when it cannot be estimated. */
    public final long neededPerArm;

    private Comparison(String metric, boolean higherIsBetter, double[] arm, double[] baseline, double alpha,
                       int resamples, long seed) {
        this.metric = metric;
        this.higherIsBetter = higherIsBetter;
        this.alpha = alpha;
        double[] a = Quantiles.sorted(arm);
        double[] b = Quantiles.sorted(baseline);
        nArm = a.length;
        nBaseline = b.length;
        medianArm = Quantiles.ofSorted(a, 0.5);
        medianBaseline = Quantiles.ofSorted(b, 0.5);
        interval = Bootstrap.ratioOfMedians(a, b, CONFIDENCE, resamples, seed);
        test = MannWhitney.test(a, b);
        long needed = SampleSize.perArm(b.length >= 2 ? b : a, 1 + EFFECT, alpha, POWER);
        Verdict v;
        if (nArm < MIN_PER_ARM || nBaseline < MIN_PER_ARM) {
            v = Verdict.NOT_ENOUGH_DATA;
            needed = needed < 0 ? MIN_PER_ARM : Math.max(MIN_PER_ARM, needed);
        } else if (test.p < alpha && interval != null && interval.excludes(1)) {
            boolean higher = interval.low() > 1;
            boolean testSaysHigher = test.probabilityXGreater > 0.5;
            if (higher != testSaysHigher) {
                v = Verdict.NO_DIFFERENCE;
            } else {
                v = higher == higherIsBetter ? Verdict.BETTER : Verdict.WORSE;
            }
        } else {
            v = Verdict.NO_DIFFERENCE;
        }
        verdict = v;
        neededPerArm = needed;
    }

    /**
     * Compares {@code arm} against {@code baseline} (NaN values left out) at significance {@code alpha};
     * the interval uses {@code resamples} resamples from {@code seed}.
     */
    public static Comparison of(String metric, boolean higherIsBetter, double[] arm, double[] baseline, double alpha,
                                int resamples, long seed) {
        return new Comparison(metric, higherIsBetter, arm, baseline, alpha, resamples, seed);
    }
}
