package dev.ccagent.report;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LogHistogramTest {

    @Test
    void quantilesWithinTheBucketWidthAndMergesAddUp() {
        LogHistogram a = new LogHistogram();
        LogHistogram b = new LogHistogram();
        for (int i = 1; i <= 1000; i++) {
            (i % 2 == 0 ? a : b).add(i * 1_000_000.0); // 1..1000 ms in ns, either histogram
        }
        a.add(0);
        LogHistogram all = new LogHistogram();
        all.addAll(a);
        all.addAll(b);
        assertEquals(1001, all.total());
        double p50 = all.quantile(0.5);
        double p90 = all.quantile(0.9);
        assertTrue(Math.abs(p50 / 500e6 - 1) < 0.04, "p50 " + p50);
        assertTrue(Math.abs(p90 / 900e6 - 1) < 0.04, "p90 " + p90);
        assertEquals(0, all.quantile(0.0001), 0, "the zero sorts first");
        // whole buckets above 900 ms: the 100 values 901..1000 less at most one 4% bucket (36 values)
        assertTrue(all.countAbove(900e6) >= 64 && all.countAbove(900e6) <= 100, "above 900 ms: " + all.countAbove(900e6));
        assertTrue(Double.isNaN(new LogHistogram().quantile(0.5)));
    }
}
