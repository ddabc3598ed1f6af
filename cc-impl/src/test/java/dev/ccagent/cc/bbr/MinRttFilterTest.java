package dev.ccagent.cc.bbr;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MinRttFilterTest {

    private static final long MS = 1_000_000L;
    private static final long S = 1_000_000_000L;

    @Test
    void zeroAndNegativeSamplesAreIgnored() {
        MinRttFilter f = new MinRttFilter(10 * S, true);
        assertFalse(f.update(0, 0));
        assertFalse(f.update(-5, 1));
        assertEquals(0, f.value());
        f.update(1_000, 2); // 1 µs is a real sample
        assertEquals(1_000, f.value());
    }

    @Test
    void expiresAfterIntervalWithoutLowerSample() {
        MinRttFilter f = new MinRttFilter(10 * S, true);
        f.update(40 * MS, 0);
        assertFalse(f.update(40 * MS, 5 * S), "equal sample does not renew, nor expire yet");
        assertFalse(f.update(45 * MS, 10 * S));
        assertTrue(f.update(45 * MS, 10 * S + 1), "expired: replaced by the current sample");
        assertEquals(45 * MS, f.value());
        assertEquals(10 * S + 1, f.stamp());
    }

    @Test
    void lowerSampleRenews() {
        MinRttFilter f = new MinRttFilter(10 * S, true);
        f.update(40 * MS, 0);
        f.update(39 * MS, 9 * S);
        assertFalse(f.update(41 * MS, 15 * S));
        assertEquals(39 * MS, f.value());
    }

    @Test
    void tinyRttIsLenientWithinNoiseMargin() {
        MinRttFilter lenient = new MinRttFilter(10 * S, true);
        MinRttFilter strict = new MinRttFilter(10 * S, false);
        for (MinRttFilter f : new MinRttFilter[] {lenient, strict}) {
            f.update(20_000, 0); // 20 µs: loopback
        }
        boolean lenientExpired = false;
        boolean strictExpired = false;
        for (long t = 1; t <= 30; t++) {
            long sample = 20_000 + (t % 7) * 15_000; // up to 110 µs of scheduling jitter
            lenientExpired |= lenient.update(sample, t * S);
            strictExpired |= strict.update(sample, t * S);
        }
        assertFalse(lenientExpired, "jitter within 128 µs keeps a tiny min RTT alive");
        assertTrue(strictExpired, "without leniency the same jitter expires the min RTT");
        assertEquals(20_000, lenient.value());
    }

    @Test
    void tinyRttStillExpiresWhenRttReallyGrew() {
        MinRttFilter f = new MinRttFilter(10 * S, true);
        f.update(20_000, 0);
        boolean expired = false;
        for (long t = 1; t <= 12; t++) {
            expired |= f.update(5 * MS, t * S); // a real 5 ms path now
        }
        assertTrue(expired);
        assertEquals(5 * MS, f.value());
    }
}
