package dev.ccagent.report.stats;

import java.util.Arrays;

/** Quantiles of a sample (linear interpolation between order statistics, as R's type 7 and numpy's default). */
public final class Quantiles {

    private Quantiles() {
    }

    /** The sorted finite values of {@code v} (NaN left out). */
    public static double[] sorted(double[] v) {
        double[] s = MannWhitney.finite(v).clone();
        Arrays.sort(s);
        return s;
    }

    /** Quantile q in [0, 1] of an ascending array; NaN when empty. */
    public static double ofSorted(double[] sorted, double q) {
        int n = sorted.length;
        if (n == 0) {
            return Double.NaN;
        }
        double h = (n - 1) * q;
        int lo = (int) Math.floor(h);
        int hi = Math.min(n - 1, lo + 1);
        if (h == lo || sorted[hi] == sorted[lo]) {
            return sorted[lo]; // also keeps infinite values (ratios over a zero median) out of inf - inf
        }
        return sorted[lo] + (h - lo) * (sorted[hi] - sorted[lo]);
    }

    public static double median(double[] v) {
        return ofSorted(sorted(v), 0.5);
    }
}
