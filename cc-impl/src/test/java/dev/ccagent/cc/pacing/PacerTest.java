package dev.ccagent.cc.pacing;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PacerTest {

    private static final int MSS = 1200;

    @Test
    void quantumIsRateTimesRatioWithinFloorAndCap() {
        Pacer p = new Pacer(MSS, 0.001, 1_000_000, 0);
        p.setRate(12_500_000); // 100 Mbit/s: 1 ms = 12500 B
        assertEquals(12_500, p.quantum());
        p.setRate(1_250_000_000L); // 10 Gbit/s: 1 ms = 1.25 MB, capped
        assertEquals(Pacer.MAX_QUANTUM, p.quantum());
        p.setRate(1_250_000); // 10 Mbit/s: 1 ms = 1250 B, below the 2-packet floor
        assertEquals(2 * MSS, p.quantum());
        p.setRate(120_000); // 2 packets = 20 ms at this rate: floor drops to one packet
        assertEquals(MSS, p.quantum());
    }

    @Test
    void quantumRatioIsAnOperatorKnob() {
        Pacer p = new Pacer(MSS, 0.004, 1_000_000, 0);
        p.setRate(12_500_000);
        assertEquals(50_000, p.quantum());
    }

    @Test
    void zeroOrNegativeRateMeansFallbackNeverZero() {
        Pacer p = new Pacer(MSS, 0.001, 360_000, 0);
        p.setRate(0);
        assertEquals(360_000, p.rate());
        p.setRate(-5);
        assertEquals(360_000, p.rate());
        Pacer tiny = new Pacer(MSS, 0.001, 0, 0);
        assertEquals((long) MSS * Pacer.MIN_RATE_PACKETS_PER_SECOND, tiny.rate(), "floor when even the fallback is 0");
    }

    @Test
    void withoutBudgetTheAnswerIsStrictlyInTheFuture() {
        Pacer p = new Pacer(MSS, 0.001, 1_200_000, 0); // 1.2 MB/s: one packet per ms
        long now = 1_000_000_000L;
        assertEquals(now, p.earliestSendTime(now, MSS)); // starts with a quantum of budget
        p.onPacketSent(now, MSS);
        p.onPacketSent(now, MSS);
        long next = p.earliestSendTime(now, MSS);
        assertTrue(next > now, "no budget left: must wait");
        assertEquals(now + 1_000_000, next, 1, "one packet's worth of time at 1.2 MB/s");
        // asking again at the same instant (what a spinning sender would do) gives the same future time
        assertEquals(next, p.earliestSendTime(now, MSS));
        assertEquals(next, p.earliestSendTime(next, MSS), "at the answered time the budget is there");
    }

    @Test
    void initialBurstIsSpentOnceAndNotRefilledAboveQuantum() {
        Pacer p = new Pacer(MSS, 0.001, 1_200_000, 10 * MSS);
        long now = 0;
        for (int i = 0; i < 10; i++) {
            assertEquals(now, p.earliestSendTime(now, MSS), "packet " + i + " of the initial window");
            p.onPacketSent(now, MSS);
        }
        assertTrue(p.earliestSendTime(now, MSS) > now);
        now += 10_000_000_000L; // idle 10 s
        assertTrue(p.budget() <= p.quantum() || p.earliestSendTime(now, MSS) == now);
        p.earliestSendTime(now, MSS);
        assertEquals(p.quantum(), p.budget(), 1e-6, "refill stops at one quantum");
    }

    @Test
    void clockGoingBackwardsNeitherRefillsNorAnswersInThePast() {
        Pacer p = new Pacer(MSS, 0.001, 1_200_000, 0);
        p.earliestSendTime(5_000_000, MSS);
        p.onPacketSent(5_000_000, 3 * MSS);
        long answer = p.earliestSendTime(4_000_000, MSS);
        assertTrue(answer > 4_000_000);
    }

    @Test
    void aLateWakeUpCatchesUpABoundedBurstButIdleAndWindowLimitsDoNot() {
        // 20 Mbit/s: quantum 2 packets; 10 ms of traffic = 25 kB, about 20 packets
        // the pacer's clock is the test's own numbers: the same bursts every run, odds 0
        assertEquals(1, burstAfter(0, false), "a punctual host gets exactly the packet it waited for");
        assertTrue(burstAfter(8_000_000, false) >= 15, "8 ms late: about 8 ms of traffic catches up");
        assertTrue(burstAfter(8_000_000, false) <= 21, "at most 10 ms of traffic");
        assertTrue(burstAfter(50_000_000, false) <= 2, "50 ms later is idle, not late: one quantum");
        assertTrue(burstAfter(8_000_000, true) <= 2, "window-limited time is not owed: one quantum");
    }

    private static int burst(Pacer p, long at) {
        int n = 0;
        while (p.earliestSendTime(at, MSS) == at && n < 1000) {
            p.onPacketSent(at, MSS);
            n++;
        }
        return n;
    }

    private static int burstAfter(long lateness, boolean windowLimited) {
        Pacer p = new Pacer(MSS, 0.001, 2_500_000, 0);
        p.setRate(2_500_000);
        p.earliestSendTime(0, MSS);
        p.onPacketSent(0, MSS);
        p.onPacketSent(0, MSS);
        long answer = p.earliestSendTime(0, MSS);
        if (windowLimited) {
            p.notBacklogged();
        }
        return burst(p, answer + lateness);
    }
}
