package dev.ccagent.report.stats;

import java.util.SplittableRandom;

/**
 * Percentile-bootstrap confidence interval for the ratio of two medians (a / b). Resamples both groups
 * independently with replacement; the same seed gives the same interval. A resample's median is found by
 * counting how often each order statistic was drawn (O(n) per resample, no sorting).
 */
public final class Bootstrap {

    /** Resamples per interval. */
    public static final int DEFAULT_RESAMPLES = 2000;

    /** An estimate with its interval; infinite ends when a baseline median of 0 meets a positive one. */
    public record Interval(double estimate, double low, double high, double level) {

        public boolean excludes(double v) {
            return low > v || high < v;
        }
    }

    private Bootstrap() {
    }

    /**
     * CI at {@code level} (e.g. 0.95) of median(a) / median(b); NaN values are left out. Null when either
     * group is empty.
     */
    public static Interval ratioOfMedians(double[] a, double[] b, double level, int resamples, long seed) {
        double[] sa = Quantiles.sorted(a);
        double[] sb = Quantiles.sorted(b);
        if (sa.length == 0 || sb.length == 0) {
            return null;
        }
        SplittableRandom random = new SplittableRandom(seed);
        double[] ratios = new double[resamples];
        int[] countA = new int[sa.length];
        int[] countB = new int[sb.length];
        for (int r = 0; r < resamples; r++) {
            ratios[r] = ratio(resampledMedian(sa, countA, random), resampledMedian(sb, countB, random));
        }
        java.util.Arrays.sort(ratios);
        double alpha = 1 - level;
        double estimate = ratio(Quantiles.ofSorted(sa, 0.5), Quantiles.ofSorted(sb, 0.5));
        return new Interval(estimate, Quantiles.ofSorted(ratios, alpha / 2), Quantiles.ofSorted(ratios, 1 - alpha / 2),
                level);
    }

    /** a / b with 0 / 0 = 1 (both medians zero: no difference) and x / 0 = +infinity. */
    public static double ratio(double a, double b) {
        if (b == 0) {
            return a == 0 ? 1 : Double.POSITIVE_INFINITY;
        }
        return a / b;
    }

    /** Median of a resample of the sorted array, drawing n indices into {@code counts} (cleared here). */
    static double resampledMedian(double[] sorted, int[] counts, SplittableRandom random) {
        int n = sorted.length;
        java.util.Arrays.fill(counts, 0);
        for (int i = 0; i < n; i++) {
            counts[random.nextInt(n)]++;
        }
        // order statistics (0-based) n/2 and (n-1)/2: equal for odd n
        int lowRank = (n - 1) / 2;
        int highRank = n / 2;
        double low = Double.NaN;
        double high = Double.NaN;
        int seen = 0;
        for (int i = 0; i < n; i++) {
            int next = seen + counts[i];
            if (Double.isNaN(low) && lowRank < next) {
                low = sorted[i];
            }
            if (highRank < next) {
                high = sorted[i];
                break;
            }
            seen = next;
        }
        return 0.5 * (low + high);
    }
}
