package dev.ccagent.report.stats;

/**
 * Roughly how many connections per arm a Mann-Whitney test needs: Noether's (1987) formula,
 * n per arm = (z_{1-alpha/2} + z_{power})^2 / (6 (p - 1/2)^2) for equal arms, where p = P(Y' &gt; Y) is the
 * effect on the probability scale. The effect is a change of the metric by a factor, applied to the
 * baseline sample itself, so the spread of real connections sets the answer.
 */
public final class SampleSize {

    private SampleSize() {
    }

    /**
     * Connections per arm to detect values multiplied by {@code factor} (e.g. 1.1) against {@code baseline} with
     * two-sided {@code alpha} and {@code power}; -1 when it cannot be estimated (fewer than 2 distinct values).
     */
    public static long perArm(double[] baseline, double factor, double alpha, double power) {
        double[] s = Quantiles.sorted(baseline);
        int n = s.length;
        if (n < 2 || s[0] == s[n - 1]) {
            return -1;
        }
        // p = P(factor * b_i > b_j) + P(=)/2 over pairs i != j
        double greater = 0;
        for (int i = 0; i < n; i++) {
            double v = factor * s[i];
            int below = lowerBound(s, v);         // b_j < v
            int notAbove = upperBound(s, v);      // b_j <= v
            double g = below + 0.5 * (notAbove - below);
            // remove the pair (i, i): factor * b_i vs b_i
            if (factor * s[i] > s[i]) {
                g -= 1;
            } else if (factor * s[i] == s[i]) {
                g -= 0.5;
            }
            greater += g;
        }
        double p = greater / ((double) n * (n - 1));
        double effect = Math.abs(p - 0.5);
        if (effect < 1e-9) {
            return -1;
        }
        double z = Normal.quantile(1 - alpha / 2) + Normal.quantile(power);
        return (long) Math.ceil(z * z / (6 * effect * effect));
    }

    /** First index with s[i] >= v. */
    private static int lowerBound(double[] s, double v) {
        int lo = 0;
        int hi = s.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (s[mid] < v) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** First index with s[i] > v. */
    private static int upperBound(double[] s, double v) {
        int lo = 0;
        int hi = s.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (s[mid] <= v) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }
}
