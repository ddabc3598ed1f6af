package dev.ccagent.cc.bbr;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RoundAndAggregationTest {

    @Test
    void roundEndsWhenPacketSentAfterRoundStartIsAcked() {
        RoundCounter r = new RoundCounter();
        assertTrue(r.onAck(0, 1200), "first ACK starts round 1");
        assertEquals(1, r.count());
        assertFalse(r.onAck(0, 2400), "packet sent before the round started");
        assertFalse(r.onAck(1199, 3600));
        assertTrue(r.onAck(1200, 4800), "packet sent when 1200 B were delivered");
        assertEquals(2, r.count());
        r.startRoundNow(10_000);
        assertFalse(r.onAck(4800, 11_000));
        assertTrue(r.onAck(10_000, 12_000));
    }

    @Test
    void extraAckedMeasuresBurstBeyondBandwidth() {
        AckAggregation a = new AckAggregation(10);
        long bw = 1_000_000; // 1 MB/s: 1000 B per ms
        long ms = 1_000_000L;
        a.onAck(bw, 0, 1000, 1, Long.MAX_VALUE); // epoch start
        // 10 ms later 10 kB: no more than the estimate explains, so a new epoch starts here and
        // (as in the draft) its first ACK counts in full
        assertEquals(10_000, a.onAck(bw, 10 * ms, 10_000, 1, Long.MAX_VALUE));
        // a burst of 20 kB 1 ms later: 20 kB more than 1 ms of bandwidth explains (epoch restarted at 10 ms)
        long extra = a.onAck(bw, 11 * ms, 20_000, 1, Long.MAX_VALUE);
        assertEquals(29_000, extra);
        assertEquals(29_000, a.extraAcked());
        // capped by the window
        assertTrue(a.onAck(bw, 11 * ms, 50_000, 2, 30_000) <= 30_000);
    }

    @Test
    void extraAckedIgnoresNothingAcked() {
        AckAggregation a = new AckAggregation(10);
        assertEquals(0, a.onAck(1_000_000, 5, 0, 1, 100_000));
        assertEquals(0, a.extraAcked());
    }
}
