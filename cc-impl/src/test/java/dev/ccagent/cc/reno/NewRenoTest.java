package dev.ccagent.cc.reno;

import dev.ccagent.cc.registry.Algorithms;
import dev.ccagent.cc.CcOptions;
import dev.ccagent.cc.CongestionMode;
import dev.ccagent.cc.TestLink;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** NewReno against RFC 9002 §7 and Appendix B. */
class NewRenoTest {

    private static final int MSS = 1200;
    private static final long MS = 1_000_000L;

    private static TestLink link(Map<String, String> options) {
        NewReno cc = (NewReno) Algorithms.create(NewReno.NAME, options);
        return new TestLink(cc, MSS, 100 * MS);
    }

    private static NewReno reno(TestLink link) {
        return (NewReno) link.cc;
    }

    @Test
    void initialWindowFollowsRfc9002() {
        // min(10·MDS, max(14720, 2·MDS))
        assertEquals(12_000, link(Map.of()).cwnd());
        CcOptions big = Algorithms.options(NewReno.NAME, Map.of("mss", "1500"));
        assertEquals(14_720, Algorithms.create(big).congestionWindow());
        CcOptions explicit = Algorithms.options(NewReno.NAME, Map.of("initial-window", "32"));
        assertEquals(32 * 1200, Algorithms.create(explicit).congestionWindow());
    }

    @Test
    void slowStartAddsTheAckedBytes() {
        TestLink link = link(Map.of());
        long p0 = link.send();
        long p1 = link.send();
        long p2 = link.send();
        link.advanceTo(100 * MS);
        link.ack(p0);
        assertEquals(12_000 + MSS, link.cwnd());
        link.ack(p1, p2);
        assertEquals(12_000 + 3 * MSS, link.cwnd());
        assertEquals(CongestionMode.SLOW_START, reno(link).mode());
    }

    /** Sends {@code n} packets now, declares the first lost at 50 ms and returns all n. */
    private static long[] sendAndLoseFirstAt50ms(TestLink link, int n) {
        long[] sent = new long[n];
        for (int i = 0; i < n; i++) {
            sent[i] = link.send();
        }
        link.advanceTo(50 * MS);
        link.lose(false, sent[0]);
        return sent;
    }

    @Test
    void lossHalvesTheWindowAndSetsSsthresh() {
        TestLink link = link(Map.of());
        sendAndLoseFirstAt50ms(link, 2);
        assertEquals(6_000, link.cwnd());
        assertTrue(reno(link).inRecovery());
        assertEquals(CongestionMode.RECOVERY, reno(link).mode());
    }

    @Test
    void congestionAvoidanceAddsOneMssPerWindowAcked() {
        TestLink link = link(Map.of("initial-window", "20"));
        long lost = link.send();
        link.advanceTo(10 * MS);
        link.lose(false, lost); // cwnd 24000 -> 12000, ssthresh 12000
        assertEquals(12_000, link.cwnd());
        link.advanceTo(20 * MS);
        long[] sent = new long[20];
        for (int i = 0; i < sent.length; i++) {
            sent[i] = link.send(); // sent after recovery began: their acks grow the window
        }
        link.advanceTo(120 * MS);
        for (int i = 0; i < 9; i++) {
            link.ack(sent[i]);
        }
        assertEquals(12_000, link.cwnd(), "9 of 10 packets of one window acked: no growth yet");
        link.ack(sent[9]);
        assertEquals(12_000 + MSS, link.cwnd(), "one window (12000 B) acked: +1 MSS");
        assertEquals(CongestionMode.CONGESTION_AVOIDANCE, reno(link).mode());
        for (int i = 10; i < 20; i++) {
            link.ack(sent[i]);
        }
        // 10 more packets = 12000 B, but the window is now 13200: credit carries over, no 2nd MSS yet
        assertEquals(12_000 + MSS, link.cwnd());
    }

    @Test
    void oneReductionPerRecoveryPeriod() {
        TestLink link = link(Map.of());
        long[] sent = sendAndLoseFirstAt50ms(link, 3);
        assertEquals(6_000, link.cwnd());
        link.advanceTo(60 * MS);
        link.lose(false, sent[1], sent[2]); // sent before the recovery period started: no second reduction
        assertEquals(6_000, link.cwnd());

        long d = link.send(); // sent during recovery
        link.advanceTo(70 * MS);
        link.lose(false, d); // a packet sent after recovery start is lost: a new congestion event
        assertEquals(3_000, link.cwnd());
    }

    @Test
    void recoveryEndsWhenAPacketSentAfterItsStartIsAcked() {
        TestLink link = link(Map.of());
        long[] old = sendAndLoseFirstAt50ms(link, 3);
        link.advanceTo(51 * MS);
        long fresh = link.send();
        link.advanceTo(100 * MS);
        link.ack(old[1]);
        assertTrue(reno(link).inRecovery(), "ack of a packet sent before recovery: still recovering");
        assertEquals(6_000, link.cwnd(), "no growth in recovery");
        link.ack(fresh);
        assertFalse(reno(link).inRecovery());
        link.ack(old[2]);
        assertFalse(reno(link).inRecovery());
    }

    @Test
    void persistentCongestionCollapsesToTwoPackets() {
        TestLink link = link(Map.of("initial-window", "50"));
        long a = link.send();
        long b = link.send();
        link.advanceTo(3_000 * MS);
        link.lose(true, a, b);
        assertEquals(2 * MSS, link.cwnd());
        assertEquals(CongestionMode.SLOW_START, reno(link).mode(), "back to slow start up to ssthresh");
        assertEquals(30_000, reno(link).snapshot(new dev.ccagent.cc.CcSnapshot()).slowStartThreshold);
    }

    @Test
    void windowNeverDropsBelowTheMinimum() {
        TestLink link = link(Map.of());
        for (int i = 0; i < 10; i++) {
            link.advanceTo(i * 10 * MS + MS); // after the previous recovery period began
            long p = link.send();
            link.advanceTo((i + 1) * 10 * MS);
            link.lose(false, p);
            assertTrue(link.cwnd() >= 2 * MSS, "cwnd " + link.cwnd() + " after loss " + i);
        }
        assertEquals(2 * MSS, link.cwnd());
    }

    @Test
    void noGrowthWhileApplicationLimited() {
        TestLink link = link(Map.of("initial-window", "40"));
        long p = link.send();
        link.advanceTo(10 * MS);
        link.onAppLimitedNow();
        link.advanceTo(110 * MS);
        link.ack(p); // 1200 B in flight of a 48000 B window: under-utilised (RFC 9002 §7.8)
        assertEquals(40 * MSS, link.cwnd());
    }
}
