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
        assertEquals(0, r.onSample(0, 13_500, QUICHE_INITIAL_RTT, 0, 0), "no RTT sample yet: the host's initial guess");
        assertEquals(0, r.bytesPerSecond());
        assertTrue(r.onSample(MS, 13_500, 40 * MS, 0, 0) > 0);
    }

    @Test
    void slowStartUntilTheFirstLossThenAfter() {
        WindowPacingRate r = new WindowPacingRate(QUICHE_INITIAL_RTT);
        long rtt = 40 * MS;
        long cwnd = 13_500;
        long sent = 0;
        long t = 0;
        for (int round = 0; round < 5; round++, t += rtt, sent += 2 * cwnd, cwnd *= 2) {
            r.onSample(t, cwnd, rtt, 0, sent);
            assertTrue(r.slowStart(), "doubling without loss, round " + round);
        }
        assertEquals(WindowPacingRate.rate(cwnd / 2, rtt, true), r.bytesPerSecond());
        // a loss inside the round ends it at once, before the round is over
        r.onSample(t + 5 * MS, cwnd / 2, rtt, 3, sent);
        assertFalse(r.slowStart());
        assertEquals(WindowPacingRate.rate(cwnd / 2, rtt, false), r.bytesPerSecond());
    }

    @Test
    void aSlowStartThePacerHoldsBackStaysSlowStart() {
        // Paced, a slow start may grow only 1.2x a round; it still adds every acknowledged byte to the window, about
        // half of what it sends. The rule before 2026-12-07 (1.5x a round) judged this over and paced it at 120%,
        // which kept it under 1.5x: Reno's window grew 10, 13, 17, 25, 33, 48 datagrams a round to its first loss
        WindowPacingRate r = new WindowPacingRate(QUICHE_INITIAL_RTT);
        long rtt = 50 * MS;
        long cwnd = 13_500;
        long sent = 0;
        r.onSample(0, cwnd, rtt, 0, sent);
        for (int round = 1; round <= 6; round++) {
            long grown = cwnd * 12 / 10;
            sent += 2 * (grown - cwnd); // as many bytes acknowledged as the window grew, and as many more in flight
            cwnd = grown;
            r.onSample(round * rtt, cwnd, rtt, 0, sent);
            assertTrue(r.slowStart(), "1.2x a round, grown by half of what was sent: round " + round);
            assertEquals(WindowPacingRate.rate(cwnd, rtt, true), r.bytesPerSecond());
        }
    }

    @Test
    void congestionAvoidanceEndsSlowStartWithoutLossAndTheConservativePhaseDoesNot() {
        WindowPacingRate r = new WindowPacingRate(QUICHE_INITIAL_RTT);
        long rtt = 40 * MS;
        r.onSample(0, 100_000, rtt, 0, 0);
        // HyStart++'s conservative slow start: a quarter of each acknowledged byte (100 kB acked, 125 kB sent)
        r.onSample(rtt / 2, 110_000, rtt, 0, 50_000);
        assertTrue(r.slowStart(), "a round is at least one smoothed RTT");
        r.onSample(rtt, 125_000, rtt, 0, 125_000);
        assertTrue(r.slowStart(), "the conservative phase grows by a fifth of what it sends: still slow start");
        // congestion avoidance: one 1350 B datagram for a window of 125 kB acknowledged
        r.onSample(2 * rtt, 126_350, rtt, 0, 250_000);
        assertFalse(r.slowStart(), "one datagram for a window sent");
        assertEquals(WindowPacingRate.rate(126_350, rtt, false), r.bytesPerSecond());
    }

    @Test
    void anUnchangedWindowKeepsThePhaseAndSlowStartGrowthStartsItAgain() {
        WindowPacingRate r = new WindowPacingRate(QUICHE_INITIAL_RTT);
        long rtt = 40 * MS;
        r.onSample(0, 13_500, rtt, 0, 0);
        r.onSample(rtt, 13_500, rtt, 0, 0);
        assertTrue(r.slowStart(), "application-limited: the window did not move");
        r.onSample(2 * rtt, 200_000, rtt, 1, 300_000);
        assertFalse(r.slowStart());
        r.onSample(3 * rtt, 200_000, rtt, 1, 500_000);
        assertFalse(r.slowStart(), "unchanged after slow start: still after");
        // persistent congestion: quiche drops the window to its minimum and slow-starts from there
        r.onSample(4 * rtt, 2_700, rtt, 1, 510_000);
        assertFalse(r.slowStart());
        r.onSample(5 * rtt, 5_400, rtt, 1, 515_400);
        assertTrue(r.slowStart(), "a lossless round that grew by half of what it sent");
    }

    @Test
    void rateSaturatesInsteadOfOverflowing() {
        assertEquals(Long.MAX_VALUE, WindowPacingRate.rate(Long.MAX_VALUE / 4, 1, true));
        assertEquals(1, WindowPacingRate.rate(1, Long.MAX_VALUE, false), "never 0 for a known window and RTT");
    }
}
