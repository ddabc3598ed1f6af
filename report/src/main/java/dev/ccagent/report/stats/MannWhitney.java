package dev.ccagent.report.stats;

import java.util.Arrays;

/**
 * The Mann-Whitney U (Wilcoxon rank-sum) test of two independent samples, two-sided. Exact null
 * distribution for small samples without ties (both n &le; {@value #EXACT_MAX_N}); otherwise the normal
 * approximation with the tie correction of the variance and a continuity correction of 0.5.
 */
public final class MannWhitney {

    /** Largest group size for the exact distribution (without ties). */
    public static final int EXACT_MAX_N = 20;

    /** A test result. */
    public static final class Result {
        /** U of the first sample: pairs (x, y) with x &gt; y, plus half the ties. */
        public final double u;
        /** u / (n1 n2): the probability that a value of x exceeds one of y (ties half). */
        public final double probabilityXGreater;
        /** Two-sided p-value. */
        public final double p;
        /** Standardised U (0 for the exact test). */
        public final double z;
        public final boolean exact;
        public final int n1;
        public final int n2;

        Result(double u, int n1, int n2, double p, double z, boolean exact) {
            this.u = u;
            this.n1 = n1;
            this.n2 = n2;
            this.probabilityXGreater = n1 > 0 && n2 > 0 ? u / ((double) n1 * n2) : 0.5;
            this.p = p;
            this.z = z;
            this.exact = exact;
        }
    }

    private MannWhitney() {
    }

    /** Tests x against y; NaN values are left out. Either sample empty gives p = 1. */
    public static Result test(double[] x0, double[] y0) {
        double[] x = finite(x0);
        double[] y = finite(y0);
        int n1 = x.length;
        int n2 = y.length;
        if (n1 == 0 || n2 == 0) {
            return new Result(0, n1, n2, 1, 0, false);
        }
        int n = n1 + n2;
        double[] all = new double[n];
        boolean[] fromX = new boolean[n];
        Integer[] order = new Integer[n];
        for (int i = 0; i < n; i++) {
            all[i] = i < n1 ? x[i] : y[i - n1];
            order[i] = i;
        }
        Arrays.sort(order, (a, b) -> Double.compare(all[a], all[b]));
        double rankSumX = 0;
        double tieTerm = 0;
        boolean ties = false;
        for (int i = 0; i < n; ) {
            int j = i;
            while (j + 1 < n && all[order[j + 1]] == all[order[i]]) {
                j++;
            }
            double rank = (i + j) / 2.0 + 1; // average of ranks i+1 .. j+1
            int t = j - i + 1;
            if (t > 1) {
                ties = true;
                tieTerm += (double) t * t * t - t;
            }
            for (int k = i; k <= j; k++) {
                if (order[k] < n1) {
                    rankSumX += rank;
                }
            }
            i = j + 1;
        }
        double u = rankSumX - n1 * (n1 + 1) / 2.0;
        if (!ties && n1 <= EXACT_MAX_N && n2 <= EXACT_MAX_N) {
            return new Result(u, n1, n2, exactTwoSided((int) Math.round(u), n1, n2), 0, true);
        }
        double mean = n1 * (double) n2 / 2;
        double variance = n1 * (double) n2 / 12 * ((n + 1) - tieTerm / ((double) n * (n - 1)));
        if (variance <= 0) {
            return new Result(u, n1, n2, 1, 0, false); // every value the same
        }
        double diff = u - mean;
        double corrected = Math.max(0, Math.abs(diff) - 0.5);
        double z = Math.signum(diff) * corrected / Math.sqrt(variance);
        double p = Math.min(1, 2 * Normal.upperTail(Math.abs(z)));
        return new Result(u, n1, n2, p, z, false);
    }

    /** Exact two-sided p-value: twice the smaller tail of U's null distribution, at most 1. */
    static double exactTwoSided(int u, int n1, int n2) {
        double[] counts = distribution(n1, n2);
        double total = 0;
        for (double c : counts) {
            total += c;
        }
        double lower = 0;
        for (int k = 0; k <= u; k++) {
            lower += counts[k];
        }
        double upper = 0;
        for (int k = u; k < counts.length; k++) {
            upper += counts[k];
        }
        return Math.min(1, 2 * Math.min(lower, upper) / total);
    }

    /**
     * Number of arrangements of n1 x's and n2 y's with each U = 0..n1*n2, by the recurrence
     * f(m, n, u) = f(m-1, n, u-n) + f(m, n-1, u) (the last element is an x, which beats all n y's, or a y).
     */
    static double[] distribution(int n1, int n2) {
        int max = n1 * n2;
        // f[m][n] as arrays over u, built row by row
        double[][][] f = new double[n1 + 1][n2 + 1][];
        for (int m = 0; m <= n1; m++) {
            for (int k = 0; k <= n2; k++) {
                double[] cur = new double[m * k + 1];
                if (m == 0 || k == 0) {
                    cur[0] = 1;
                } else {
                    double[] a = f[m - 1][k];
                    double[] b = f[m][k - 1];
                    for (int u = 0; u < cur.length; u++) {
                        double v = 0;
                        if (u - k >= 0 && u - k < a.length) {
                            v += a[u - k];
                        }
                        if (u < b.length) {
                            v += b[u];
                        }
                        cur[u] = v;
                    }
                }
                f[m][k] = cur;
            }
        }
        double[] out = f[n1][n2];
        return out.length == max + 1 ? out : Arrays.copyOf(out, max + 1);
    }

    static double[] finite(double[] v) {
        int n = 0;
        for (double d : v) {
            if (!Double.isNaN(d)) {
                n++;
            }
        }
        if (n == v.length) {
            return v;
        }
        double[] out = new double[n];
        int i = 0;
        for (double d : v) {
            if (!Double.isNaN(d)) {
                out[i++] = d;
            }
        }
        return out;
    }
}
