package dev.ccagent.report.stats;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Reference values from SciPy 1.17 {@code scipy.stats.mannwhitneyu(x, y, alternative='two-sided', ...)}. */
class MannWhitneyTest {

    @Test
    void textbookSmallSampleExact() {
        // U = 17 for x (3 for y); exact two-sided p = 12/108 ... = 0.1111
        MannWhitney.Result r = MannWhitney.test(new double[] {19, 22, 16, 29, 24}, new double[] {20, 11, 17, 12});
        assertTrue(r.exact);
        assertEquals(17, r.u, 0);
        assertEquals(0.1111111111111111, r.p, 1e-12);
        assertEquals(17.0 / 20, r.probabilityXGreater, 1e-12);
    }

    @Test
    void exactTenAgainstTwelve() {
        double[] e = {3.1, 4.7, 5.2, 6.8, 7.0, 7.7, 8.3, 9.9, 10.4, 12.5};
        double[] f = {1.2, 2.5, 2.9, 3.3, 3.9, 4.1, 5.5, 5.9, 6.1, 6.6, 7.2, 8.0};
        MannWhitney.Result r = MannWhitney.test(e, f);
        assertTrue(r.exact);
        assertEquals(94, r.u, 0);
        assertEquals(0.024916260210377857, r.p, 1e-12);
        // symmetric: swapping the samples gives U' = n1 n2 - U and the same p
        MannWhitney.Result s = MannWhitney.test(f, e);
        assertEquals(120 - 94, s.u, 0);
        assertEquals(r.p, s.p, 1e-12);
    }

    @Test
    void normalApproximationWithTies() {
        double[] a = {1.1, 2.2, 2.2, 3.3, 4.4, 4.4, 5.5, 6.6, 7.7, 8.8, 8.8, 9.9};
        double[] b = {0.5, 1.1, 2.2, 2.2, 3.0, 3.3, 3.3, 4.0, 4.4, 5.0};
        MannWhitney.Result r = MannWhitney.test(a, b);
        assertFalse(r.exact);
        assertEquals(90.5, r.u, 1e-9);
        assertEquals(0.04665634687474571, r.p, 2e-6);
    }

    @Test
    void normalApproximationLargerSamples() {
        double[] c = {10.002, 10.597, 9.452, 8.219, 9.091, 8.017, 10.12, 12.68, 9.016, 8.759, 10.98, 10.714, 10.211,
            8.139, 9.941, 11.391, 7.312, 9.085, 6.198, 7.421, 6.317, 9.53, 7.465, 10.543, 10.314};
        double[] d = {10.626, 5.966, 9.923, 10.903, 11.227, 7.94, 10.044, 9.043, 9.382, 13.122, 9.385, 10.935, 12.769,
            9.833, 10.777, 11.221, 11.128, 8.55, 11.152, 13.718, 7.906, 12.719, 11.239, 9.717, 15.001, 12.525, 8.601,
            11.149, 12.153, 10.622};
        MannWhitney.Result r = MannWhitney.test(c, d);
        assertFalse(r.exact, "n = 25/30 is above the exact limit");
        assertEquals(213, r.u, 0);
        assertEquals(0.006336348656887043, r.p, 2e-6);
        assertTrue(r.probabilityXGreater < 0.5);
    }

    @Test
    void degenerateInputs() {
        assertEquals(1, MannWhitney.test(new double[0], new double[] {1, 2}).p, 0);
        assertEquals(1, MannWhitney.test(new double[] {3, 3, 3}, new double[] {3, 3, 3, 3}).p, 0);
        MannWhitney.Result nan = MannWhitney.test(new double[] {1, Double.NaN, 2}, new double[] {3, 4});
        assertEquals(2, nan.n1);
    }

    @Test
    void normalQuantilesAndTails() {
        assertEquals(1.959964, Normal.quantile(0.975), 1e-5);
        assertEquals(0.841621, Normal.quantile(0.8), 1e-5);
        assertEquals(0.025, Normal.upperTail(1.959964), 1e-7);
        assertEquals(2.866515718791939e-7, Normal.upperTail(5), 1e-12);
    }
}
