package dev.ccagent.cc;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RttEstimatorTest {

    private static final long MS = 1_000_000L;

    @Test
    void firstSampleInitialisesPerRfc9002() {
        RttEstimator r = new RttEstimator(333 * MS);
        assertFalse(r.hasSample());
        assertEquals(333 * MS, r.smoothedRtt());
        r.onSample(100 * MS, 10 * MS);
        assertEquals(100 * MS, r.minRtt());
        assertEquals(100 * MS, r.smoothedRtt(), "first sample is not adjusted for ack delay");
        assertEquals(50 * MS, r.rttVariance());
    }

    @Test
    void laterSamplesSubtractAckDelayOnlyAboveMinRtt() {
        RttEstimator r = new RttEstimator(333 * MS);
        r.onSample(100 * MS, 0);
        r.onSample(120 * MS, 10 * MS); // adjusted 110
        assertEquals((7 * 100 * MS + 110 * MS) / 8, r.smoothedRtt());
        assertEquals((3 * 50 * MS + 10 * MS) / 4, r.rttVariance());
        RttEstimator s = new RttEstimator(333 * MS);
        s.onSample(100 * MS, 0);
        s.onSample(105 * MS, 10 * MS); // 105 < 100 + 10: no adjustment
        assertEquals((7 * 100 * MS + 105 * MS) / 8, s.smoothedRtt());
    }

    @Test
    void zeroSamplesAreClampedNotStoredAsZero() {
        RttEstimator r = new RttEstimator(333 * MS);
        r.onSample(0, 0);
        assertEquals(1, r.minRtt());
        assertTrue(r.smoothedRtt() > 0);
        r.onSample(-5, 0);
        assertEquals(1, r.latestRtt());
    }

    @Test
    void probeTimeoutAndLossDelay() {
        RttEstimator r = new RttEstimator(333 * MS);
        r.onSample(40 * MS, 0);
        assertEquals(40 * MS + 4 * 20 * MS + 25 * MS, r.probeTimeout(25 * MS));
        assertEquals(45 * MS, r.lossDelay());
        RttEstimator tiny = new RttEstimator(333 * MS);
        tiny.onSample(1000, 0);
        assertEquals(RttEstimator.GRANULARITY_NANOS, tiny.lossDelay(), "at least kGranularity");
    }
}
