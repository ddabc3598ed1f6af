package dev.ccagent.report.stats;

/** The standard normal distribution: CDF and quantile, enough for p-values and sample-size estimates. */
public final class Normal {

    private Normal() {
    }

    /** P(Z &le; z). */
    public static double cdf(double z) {
        return 0.5 * erfc(-z / Math.sqrt(2));
    }

    /** P(Z &gt; z), accurate in the far tail (no 1 - cdf cancellation). */
    public static double upperTail(double z) {
        return 0.5 * erfc(z / Math.sqrt(2));
    }

    /** The z with cdf(z) = p, for 0 &lt; p &lt; 1 (bisection on {@link #cdf}; 1e-10 absolute). */
    public static double quantile(double p) {
        if (!(p > 0 && p < 1)) {
            throw new IllegalArgumentException("p must be in (0, 1): " + p);
        }
        double lo = -40;
        double hi = 40;
        for (int i = 0; i < 200 && hi - lo > 1e-10; i++) {
            double mid = 0.5 * (lo + hi);
            if (cdf(mid) < p) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        return 0.5 * (lo + hi);
    }

    /**
     * Complementary error function, Chebyshev-fitted rational approximation with fractional error
     * below 1.2e-7 everywhere (the classic erfc fit of Numerical Recipes, section 6.2).
     */
    static double erfc(double x) {
        double z = Math.abs(x);
        double t = 1 / (1 + 0.5 * z);
        double r = t * Math.exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418
                + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587
                + t * (-0.82215223 + t * 0.17087277)))))))));
        return x >= 0 ? r : 2 - r;
    }
}
