package dev.ccagent.cc.pacing;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class RateDeparturesTest {

    private static final long MS = 1_000_000L;

    @Test
    void packetsLeaveOneGapApart() {
        RateDepartures d = new RateDepartures(MS, 100 * MS);
        long now = 5_000 * MS;
        long rate = 1_000_000; // 1000 B per ms
        long t = d.next(now);
        assertEquals(now, t, "the first packet is due now");
        d.sent(now, 1000, rate);
        assertEquals(now + MS, d.next(now));
        d.sent(now, 500, rate);
        assertEquals(now + MS + MS / 2, d.next(now + MS / 4), "the gap follows the bytes");
    }

    @Test
    void aLateSenderCatchesUpAtMostTheAllowance() {
        RateDepartures d = new RateDepartures(MS, 100 * MS);
        long now = 0;
        long rate = 1_000_000;
        d.sent(now, 1000, rate); // next at 1 ms
        long late = 10 * MS;
        assertEquals(late, d.next(late), "behind schedule: due now");
        d.sent(late, 1000, rate);
        // the schedule was 9 ms behind: it keeps 1 ms of that, so the next is due at late - 1 ms + 1 ms
        assertEquals(late, d.next(late));
        d.sent(late, 1000, rate);
        assertEquals(late + MS, d.next(late));
    }

    @Test
    void noRateMeansDueNowAndNoGap() {
        RateDepartures d = new RateDepartures(MS, 100 * MS);
        d.sent(0, 1000, 1000);
        d.sent(0, 1000, 0);
        assertEquals(7, d.next(7));
        assertThrows(IllegalArgumentException.class, () -> new RateDepartures(-1, MS));
        assertThrows(IllegalArgumentException.class, () -> new RateDepartures(MS, 0));
    }

    @Test
    void aRateNearZeroHoldsAPacketAtMostTheLongestLead() {
        RateDepartures d = new RateDepartures(MS, 100 * MS);
        long now = 7 * MS;
        d.sent(now, 1350, 1); // 1350 s at 1 B/s
        assertEquals(now + 100 * MS, d.next(now), "a gap longer than the lead is cut to it");
        d.sent(now, 1350, 1);
        assertEquals(now + 100 * MS, d.next(now), "nor do such gaps add up beyond it");
        d.sent(now + 100 * MS, 1000, 1_000_000);
        assertEquals(now + 101 * MS, d.next(now + 100 * MS), "back at a real rate: one gap after the last departure");
    }
}
