package dev.ccagent.cc.reno;

import dev.ccagent.cc.Algorithms;
import dev.ccagent.cc.CongestionController;
import dev.ccagent.cc.CongestionMode;
import dev.ccagent.cc.TestLink;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** High-BDP Reno against the quicly "pico" behaviour described in cc-anchors.md. */
class HighBdpRenoTest {

    private static final int MSS = 1200;
    private static final long MS = 1_000_000L;
    private static final long SECOND = 1_000 * MS;
    /** Window at which the loss happens: 400 packets (a high-BDP path at these RTTs). */
    private static final long LOSS_WINDOW = 400L * MSS;

    private static TestLink link(String algorithm, long rttNanos) {
        return link(algorithm, rttNanos, Map.of());
    }

    private static TestLink link(String algorithm, long rttNanos, Map<String, String> options) {
        CongestionController cc = Algorithms.create(algorithm, options);
        return new TestLink(cc, MSS, rttNanos);
    }

    /**
     * Slow start up to {@link #LOSS_WINDOW}, then one loss. Returns the window at the loss; the
     * link's clock stands at the loss.
     */
    private static long growThenLose(TestLink link) {
        assertTrue(link.runUntilWindow(LOSS_WINDOW, 60 * SECOND) >= 0);
        long peak = link.cwnd();
        link.loseOldest();
        return peak;
    }

    @ParameterizedTest(name = "rtt {0} ms")
    @ValueSource(longs = {100, 300})
    void regainsThePreLossWindowInAboutOneSecond(long rttMillis) {
        TestLink hbdp = link(HighBdpReno.NAME, rttMillis * MS);
        long peak = growThenLose(hbdp);
        long lossTime = hbdp.now();
        assertEquals((long) (peak * 0.7), hbdp.cwnd(), "beta 0.7");

        long regained = hbdp.runUntilWindow(peak, lossTime + 5 * SECOND);
        assertTrue(regained >= 0, "never regained " + peak);
        double seconds = (regained - lossTime) / 1e9;
        // ≈ 0.85 s of growth plus the recovery round trip, which does not grow the window
        assertTrue(seconds >= 0.6 && seconds <= 1.5, "regained after " + seconds + " s");

        TestLink reno = link(NewReno.NAME, rttMillis * MS);
        long renoPeak = growThenLose(reno);
        long renoLoss = reno.now();
        assertEquals(-1, reno.runUntilWindow(renoPeak, renoLoss + 10 * SECOND),
                "NewReno should need far longer than 10 s; window " + reno.cwnd() + " of " + renoPeak);
    }

    @Test
    void recoveryTimeHardlyDependsOnRtt() {
        double[] seconds = new double[2];
        long[] rtts = {50, 200};
        for (int i = 0; i < 2; i++) {
            TestLink link = link(HighBdpReno.NAME, rtts[i] * MS);
            long peak = growThenLose(link);
            long lossTime = link.now();
            long regained = link.runUntilWindow(peak, lossTime + 5 * SECOND);
            // subtract the recovery round trip, which is RTT-proportional by construction
            seconds[i] = (regained - lossTime) / 1e9 - rtts[i] / 1e3;
        }
        assertEquals(seconds[0], seconds[1], 0.25, "growth time at 50 ms vs 200 ms");
    }

    @Test
    void growthNeverExceedsAckedBytes() {
        // At a 10 s RTT the multiplicative term would be 4.3 bytes per acked byte: capped at 1.
        TestLink link = link(HighBdpReno.NAME, 10 * SECOND);
        HighBdpReno cc = (HighBdpReno) link.cc;
        long lost = link.send();
        link.advanceTo(SECOND);
        link.lose(false, lost);
        long[] sent = new long[40];
        link.advanceTo(2 * SECOND);
        for (int i = 0; i < sent.length; i++) {
            sent[i] = link.send();
        }
        link.advanceTo(12 * SECOND);
        long start = link.cwnd();
        for (long pn : sent) {
            long before = link.cwnd();
            link.ack(pn);
            assertTrue(link.cwnd() - before <= MSS, "grew " + (link.cwnd() - before) + " on " + MSS + " B acked");
        }
        assertEquals(1.0, cc.increasePerAckedByte(), 1e-12);
        assertEquals(sent.length * (long) MSS, link.cwnd() - start, "slow-start rate exactly, not more");
        assertEquals(CongestionMode.CONGESTION_AVOIDANCE, cc.mode());
    }

    @Test
    void aSingleHugeAckFeedsTheWholeStash() {
        long rtt = 100 * MS;
        // a 100-packet window, so the multiplicative term (0.043/B) dominates Reno's (MSS/cwnd)
        TestLink one = link(HighBdpReno.NAME, rtt, Map.of("initial-window", "100"));
        TestLink many = link(HighBdpReno.NAME, rtt, Map.of("initial-window", "100"));
        long[][] sent = new long[2][];
        TestLink[] links = {one, many};
        for (int l = 0; l < 2; l++) {
            TestLink link = links[l];
            long lost = link.send();
            link.advanceTo(10 * MS);
            link.lose(false, lost); // 120000 -> 84000
            link.advanceTo(20 * MS);
            sent[l] = new long[200];
            for (int i = 0; i < 200; i++) {
                sent[l][i] = link.send();
            }
            link.advanceTo(120 * MS);
        }
        long before = one.cwnd();
        one.ack(sent[0]); // 240000 B in one ACK
        long oneGrowth = one.cwnd() - before;
        for (long pn : sent[1]) {
            many.ack(pn);
        }
        long manyGrowth = many.cwnd() - before;
        // 240000 B × (1/0.7 − 1) × 0.1 s ≈ 10286 B ≈ 8 MSS, all from one ACK
        assertTrue(oneGrowth >= 7 * MSS && oneGrowth <= 9 * MSS, "growth " + oneGrowth);
        assertEquals(manyGrowth, oneGrowth, MSS, "one huge ACK vs the same bytes in 200 ACKs");
        HighBdpReno cc = (HighBdpReno) one.cc;
        assertTrue(cc.stash() < MSS / cc.increasePerAckedByte(), "leftover stash below one step");
    }

    @Test
    void classicRenoGrowthWhenItIsLarger() {
        // 1 ms RTT: the multiplicative term is 0.00043 per byte, Reno's MSS/cwnd is 1/7 per byte.
        TestLink link = link(HighBdpReno.NAME, MS);
        HighBdpReno cc = (HighBdpReno) link.cc;
        long lost = link.send();
        link.advanceTo(MS);
        link.lose(false, lost); // 12000 -> 8400 = 7 packets
        link.advanceTo(2 * MS);
        assertEquals(MSS / 8400.0, cc.increasePerAckedByte(), 1e-12);
        long[] sent = new long[7];
        for (int i = 0; i < 7; i++) {
            sent[i] = link.send();
        }
        link.advanceTo(3 * MS);
        link.ack(sent);
        assertEquals(8400 + MSS, link.cwnd(), "one MSS per window acked, as Reno");
    }

    @Test
    void optionBetaChangesTheReduction() {
        CongestionController cc = Algorithms.create(HighBdpReno.NAME, Map.of("beta", "0.5"));
        TestLink link = new TestLink(cc, MSS, 100 * MS);
        long p = link.send();
        link.advanceTo(MS);
        link.lose(false, p);
        assertEquals(6_000, link.cwnd());
    }
}
