package dev.ccagent.cc.pacing;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class WindowPacingRateTest {

    private static final long MS = 1_000_000L;
    private static final long QUICHE_INITIAL_RTT = 333 * MS;

    @Test
    void rateIsTheWindowPerRttTimesLinuxRatios() {
        // 100 kB per 50 ms = 2 MB/s; 200% and 120% of it
        assertEquals(4_000_000, WindowPacingRate.rate(100_000, 50 * MS, true));
        assertEquals(2_400_000, WindowPacingRate.rate(100_000, 50 * MS, false));
    }

    @Test
    void unknownWindowOrRttMeansNoPacing() {
        assertEquals(0, WindowPacingRate.rate(0, 50 * MS, true));
        assertEquals(0, WindowPacingRate.rate(100_000, 0, false));
        WindowPacingRate r = new WindowPacingRate(QUICHE_INITIAL_RTT);
        assertEquals(0, r.onSample(0, 13_500, QUICHE_INITIAL_RTT, 0), "no RTT sample yet: the host's initial guess");
        assertEquals(0, r.bytesPerSecond());
        assertTrue(r.onSample(MS, 13_500, 40 * MS, 0) > 0);
    }

    @Test
    void slowStartUntilTheFirstLossThenAfter() {
        WindowPacingRate r = new WindowPacingRate(QUICHE_INITIAL_RTT);
        long rtt = 40 * MS;
        long cwnd = 13_500;
        long t = 0;
        for (int round = 0; round < 5; round++, t += rtt, cwnd *= 2) {
            r.onSample(t, cwnd, rtt, 0);
            assertTrue(r.slowStart(), "doubling without loss, round " + round);
        }
        assertEquals(WindowPacingRate.rate(cwnd / 2, rtt, true), r.bytesPerSecond());
        // a loss inside the round ends it at once, before the round is over
        r.onSample(t + 5 * MS, cwnd / 2, rtt, 3);
        assertFalse(r.slowStart());
        assertEquals(WindowPacingRate.rate(cwnd / 2, rtt, false), r.bytesPerSecond());
    }

    @Test
    void slowGrowthEndsSlowStartWithoutLoss() {
        // HyStart++ leaves slow start without a loss: its conservative phase grows 1.25x a round at most
        WindowPacingRate r = new WindowPacingRate(QUICHE_INITIAL_RTT);
        long rtt = 40 * MS;
        r.onSample(0, 100_000, rtt, 0);
        r.onSample(rtt / 2, 110_000, rtt, 0);
        assertTrue(r.slowStart(), "a round is at least one smoothed RTT");
        r.onSample(rtt, 125_000, rtt, 0);
        assertFalse(r.slowStart(), "1.25x in a round");
    }

    @Test
    void anUnchangedWindowKeepsThePhaseAndDoublingStartsSlowStartAgain() {
        WindowPacingRate r = new WindowPacingRate(QUICHE_INITIAL_RTT);
        long rtt = 40 * MS;
        r.onSample(0, 13_500, rtt, 0);
        r.onSample(rtt, 13_500, rtt, 0);
        assertTrue(r.slowStart(), "application-limited: the window did not move");
        r.onSample(2 * rtt, 200_000, rtt, 1);
        assertFalse(r.slowStart());
        r.onSample(3 * rtt, 200_000, rtt, 1);
        assertFalse(r.slowStart(), "unchanged after slow start: still after");
        // persistent congestion: quiche drops the window to its minimum and slow-starts from there
        r.onSample(4 * rtt, 2_700, rtt, 1);
        assertFalse(r.slowStart());
        r.onSample(5 * rtt, 5_400, rtt, 1);
        assertTrue(r.slowStart(), "a lossless round that doubled the window");
    }

    @Test
    void rateSaturatesInsteadOfOverflowing() {
        assertEquals(Long.MAX_VALUE, WindowPacingRate.rate(Long.MAX_VALUE / 4, 1, true));
        assertEquals(1, WindowPacingRate.rate(1, Long.MAX_VALUE, false), "never 0 for a known window and RTT");
    }
}
