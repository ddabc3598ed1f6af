package dev.ccagent.report;

import dev.ccagent.report.stats.Comparison;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The verdict line says why "no detectable difference" stands beside an interval that excludes 1. */
class FleetOutputTest {

    /** 40 goodputs spread evenly from {@code low} to twice it. */
    private static double[] spread(double low) {
        double[] x = new double[40];
        for (int i = 0; i < x.length; i++) {
            x[i] = low * (1 + i / 40.0);
        }
        return x;
    }

    @Test
    void anIntervalThatExcludesOneWithPAboveAlphaSaysNotSignificant() {
        double[] arm = spread(12e6);
        double[] base = spread(8e6);
        // the same data is "better" at a report's usual per-test alpha, and not at an alpha far below its p
        Comparison strict = Comparison.of("goodput", true, arm, base, 1e-12, 400, 1);
        assertTrue(strict.interval.excludes(1) && strict.test.p >= 1e-12, strict.interval + " p=" + strict.test.p);
        assertEquals(Comparison.Verdict.NO_DIFFERENCE, strict.verdict);
        String line = FleetOutput.verdictLine(strict);
        assertTrue(line.contains("no detectable difference") && line.contains("not significant at alpha 1.0e-12")
                && line.contains("though the 95% interval excludes 1"), line);

        Comparison usual = Comparison.of("goodput", true, arm, base, Comparison.ALPHA / 5, 400, 1);
        assertEquals(Comparison.Verdict.BETTER, usual.verdict, FleetOutput.verdictLine(usual));
        assertEquals("", FleetOutput.whyNoDifference(usual));
    }

    @Test
    void anIntervalThatSpansOneNeedsNoExplanation() {
        Comparison c = Comparison.of("goodput", true, spread(8e6), spread(8e6), Comparison.ALPHA / 5, 400, 1);
        assertTrue(!c.interval.excludes(1), c.interval.toString());
        assertEquals(Comparison.Verdict.NO_DIFFERENCE, c.verdict);
        assertEquals("", FleetOutput.whyNoDifference(c));
        assertTrue(!FleetOutput.verdictLine(c).contains("not significant"), FleetOutput.verdictLine(c));
    }
}
