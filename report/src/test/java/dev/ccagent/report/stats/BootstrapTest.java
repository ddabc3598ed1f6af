package dev.ccagent.report.stats;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BootstrapTest {

    static double[] lognormal(SplittableRandom r, int n, double median, double sigma) {
        double[] v = new double[n];
        for (int i = 0; i < n; i++) {
            v[i] = median * Math.exp(sigma * gaussian(r));
        }
        return v;
    }

    static double gaussian(SplittableRandom r) {
        // Box-Muller
        double u = r.nextDouble();
        double w = r.nextDouble();
        return Math.sqrt(-2 * Math.log(1 - u)) * Math.cos(2 * Math.PI * w);
    }

    @Test
    void sameSeedSameIntervalOtherSeedAnother() {
        SplittableRandom r = new SplittableRandom(3);
        double[] a = lognormal(r, 41, 20, 0.5);
        double[] b = lognormal(r, 37, 10, 0.5);
        Bootstrap.Interval one = Bootstrap.ratioOfMedians(a, b, 0.95, 2000, 42);
        Bootstrap.Interval two = Bootstrap.ratioOfMedians(a, b, 0.95, 2000, 42);
        Bootstrap.Interval other = Bootstrap.ratioOfMedians(a, b, 0.95, 2000, 43);
        assertEquals(one.low(), two.low(), 0);
        assertEquals(one.high(), two.high(), 0);
        assertNotEquals(one.low(), other.low());
        assertEquals(Quantiles.median(a) / Quantiles.median(b), one.estimate(), 1e-12);
        assertTrue(one.low() < one.estimate() && one.estimate() < one.high());
        // the order of the values does not matter
        double[] reversed = new double[a.length];
        for (int i = 0; i < a.length; i++) {
            reversed[i] = a[a.length - 1 - i];
        }
        assertEquals(one.low(), Bootstrap.ratioOfMedians(reversed, b, 0.95, 2000, 42).low(), 0);
    }

    @Test
    void resampledMedianMatchesSortingAResample() {
        SplittableRandom r = new SplittableRandom(9);
        for (int n : new int[] {1, 2, 5, 6, 33}) {
            double[] sorted = Quantiles.sorted(lognormal(new SplittableRandom(n), n, 5, 1));
            int[] counts = new int[n];
            SplittableRandom a = new SplittableRandom(n * 7L);
            SplittableRandom b = new SplittableRandom(n * 7L);
            for (int k = 0; k < 50; k++) {
                double fast = Bootstrap.resampledMedian(sorted, counts, a);
                double[] resample = new double[n];
                for (int i = 0; i < n; i++) {
                    resample[i] = sorted[b.nextInt(n)];
                }
                assertEquals(Quantiles.median(resample), fast, 1e-12, "n=" + n);
            }
        }
    }

    @Test
    void coversTheTrueRatioAboutNinetyFivePercentOfTheTime() {
        int covered = 0;
        int runs = 300;
        for (int s = 0; s < runs; s++) {
            SplittableRandom r = new SplittableRandom(1000 + s);
            double[] a = lognormal(r, 60, 30, 0.6);
            double[] b = lognormal(r, 60, 20, 0.6);
            Bootstrap.Interval ci = Bootstrap.ratioOfMedians(a, b, 0.95, 1000, s);
            if (ci.low() <= 1.5 && 1.5 <= ci.high()) {
                covered++;
            }
        }
        double coverage = covered / (double) runs;
        // deterministic: seeds 1,000 + s for the data and s for the resamples, the same coverage every run: odds 0
        assertTrue(coverage > 0.88 && coverage <= 1.0, "coverage " + coverage);
    }

    @Test
    void zeroMedians() {
        Bootstrap.Interval both = Bootstrap.ratioOfMedians(new double[] {0, 0, 0}, new double[] {0, 0}, 0.95, 200, 1);
        assertEquals(1, both.estimate(), 0);
        Bootstrap.Interval inf = Bootstrap.ratioOfMedians(new double[] {1, 1, 1}, new double[] {0, 0}, 0.95, 200, 1);
        assertEquals(Double.POSITIVE_INFINITY, inf.estimate(), 0);
        assertTrue(inf.excludes(1));
    }
}
