package dev.ccagent.cc.cubic;

import dev.ccagent.cc.registry.Algorithms;
import dev.ccagent.cc.CcSnapshot;
import dev.ccagent.cc.CongestionMode;
import dev.ccagent.cc.TestLink;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * CUBIC against RFC 9438. Every bound below runs on {@link TestLink}'s simulated clock: the same figures
 * every run, odds 0.
 */
class CubicTest {

    private static final int MSS = 1200;
    private static final long MS = 1_000_000L;
    private static final long SECOND = 1_000 * MS;
    /** 100 packets: W_max for the known-value tests. */
    private static final long W_MAX = 100L * MSS;

    private static TestLink link(long rttNanos, String... options) {
        Map<String, String> map = new HashMap<>();
        for (int i = 0; i < options.length; i += 2) {
            map.put(options[i], options[i + 1]);
        }
        return new TestLink(Algorithms.create(Cubic.NAME, map), MSS, rttNanos);
    }

    private static Cubic cubic(TestLink link) {
        return (Cubic) link.cc;
    }

    /** Window 120000 B, loss at 10 ms, one packet sent at 20 ms and acked at 120 ms (epoch start). */
    private static TestLink lossAtWMaxThenFirstAck(long rttNanos, String... options) {
        String[] all = new String[options.length + 2];
        all[0] = "initial-window";
        all[1] = "100";
        System.arraycopy(options, 0, all, 2, options.length);
        TestLink link = link(rttNanos, all);
        long p = link.send();
        link.advanceTo(10 * MS);
        link.lose(false, p);
        link.advanceTo(20 * MS);
        long q = link.send();
        link.advanceTo(120 * MS);
        link.ack(q);
        return link;
    }

    @Test
    void kAndTheCurveForAKnownWMax() {
        TestLink link = lossAtWMaxThenFirstAck(100 * MS);
        Cubic cc = cubic(link);
        assertTrue(cc.epochStarted());
        assertEquals(120 * MS, cc.epochStartNanos());
        assertEquals(W_MAX, cc.wMax(), 1e-9);
        // K = ∛(W_max(1−β)/C) = ∛(100 · 0.3 / 0.4) = ∛75 s
        assertEquals(4.2171633, cc.k(), 1e-6);
        assertEquals(0.7 * W_MAX, cc.wCubic(0), 1e-6, "W(0) = cwnd after the reduction");
        assertEquals(W_MAX, cc.wCubic(cc.k()), 1e-6, "W(K) = W_max");
        // W(2K) = W_max + C·K³ segments = 100 + 0.4 · 75 = 130 segments
        assertEquals(130.0 * MSS, cc.wCubic(2 * cc.k()), 1e-6);
        // W(1 s) = 0.4 (1 − K)³ + 100 segments
        double d = 1 - Math.cbrt(75);
        assertEquals((0.4 * d * d * d + 100) * MSS, cc.wCubic(1.0), 1e-6);
    }

    @Test
    void reductionIsBetaTimesTheWindow() {
        TestLink link = lossAtWMaxThenFirstAck(100 * MS);
        CcSnapshot s = cubic(link).snapshot(new CcSnapshot());
        assertEquals(84_000, s.slowStartThreshold);
        assertTrue(link.cwnd() >= 84_000 && link.cwnd() < 84_000 + MSS, "cwnd " + link.cwnd());

        TestLink custom = lossAtWMaxThenFirstAck(100 * MS, "beta", "0.8");
        assertEquals(96_000, custom.cc.snapshot(new CcSnapshot()).slowStartThreshold);
        assertEquals(4.2171633 * Math.cbrt(0.2 / 0.3), cubic(custom).k(), 1e-6, "K with β = 0.8");
    }

    @Test
    void growthFollowsTheCurveOneRttAhead() {
        // 300 ms RTT: an ack 0.5 s after the previous one is still ordinary ack clocking
        TestLink link = lossAtWMaxThenFirstAck(300 * MS);
        Cubic cc = cubic(link);
        long p = link.send();
        link.advanceTo(620 * MS); // t = 0.5 s into the epoch
        long before = link.cwnd();
        assertTrue(cc.wCubic(0.5) > cc.renoEstimate(), "in the CUBIC region");
        link.ack(p);
        // cwnd += (W_cubic(t + RTT) − cwnd) · acked / cwnd
        double expected = before + (cc.wCubic(0.5 + 0.3) - before) * MSS / before;
        assertEquals(expected, link.cwnd(), 1.0);
        assertTrue(link.cwnd() > before + 100, "grew " + (link.cwnd() - before));
    }

    @Test
    void targetIsClampedToOneAndAHalfWindows() {
        // A 10 s RTT puts W_cubic(t + RTT) far above 1.5·cwnd: each acked packet may then add
        // (1.5·cwnd − cwnd)·MSS/cwnd = MSS/2, no more.
        TestLink link = lossAtWMaxThenFirstAck(10 * SECOND);
        Cubic cc = cubic(link);
        long[] sent = new long[10];
        for (int i = 0; i < sent.length; i++) {
            sent[i] = link.send();
        }
        link.advanceTo(1_120 * MS); // t = 1 s
        assertTrue(cc.wCubic(11) > 1.5 * link.cwnd());
        long before = link.cwnd();
        link.ack(sent);
        assertEquals(sent.length * MSS / 2.0, link.cwnd() - before, 1.0);
    }

    @Test
    void fastConvergenceLowersWMax() {
        for (boolean on : new boolean[]{true, false}) {
            TestLink link = lossAtWMaxThenFirstAck(100 * MS, "fast-convergence", on ? "on" : "off");
            Cubic cc = cubic(link);
            long cwndAtSecondLoss = link.cwnd(); // 84000 and a few bytes: below W_max = 120000
            long p = link.send();
            link.advanceTo(200 * MS);
            link.lose(false, p);
            double expectedWMax = on ? cwndAtSecondLoss * 0.85 : cwndAtSecondLoss;
            assertEquals(expectedWMax, cc.wMax(), 1e-6, "fast convergence " + on);
            assertEquals((long) (cwndAtSecondLoss * 0.7), link.cwnd());
        }
    }

    @Test
    void congestionEventResetsTheEpoch() {
        TestLink link = lossAtWMaxThenFirstAck(100 * MS);
        Cubic cc = cubic(link);
        long p = link.send();
        link.advanceTo(200 * MS);
        link.lose(false, p);
        assertFalse(cc.epochStarted());
        link.advanceTo(210 * MS);
        long q = link.send();
        link.advanceTo(300 * MS);
        link.ack(q);
        assertTrue(cc.epochStarted());
        assertEquals(300 * MS, cc.epochStartNanos(), "a new epoch at the first ack after recovery");
        assertEquals(Math.cbrt((cc.wMax() - 0.7 * (cc.wMax() / 0.85)) / MSS / 0.4), cc.k(), 0.01);
    }

    @Test
    void persistentCongestionRestartsWithAFlatCurve() {
        TestLink link = link(100 * MS, "initial-window", "100");
        Cubic cc = cubic(link);
        long a = link.send();
        long b = link.send();
        link.advanceTo(3 * SECOND);
        link.lose(true, a, b);
        assertEquals(2 * MSS, link.cwnd());
        assertFalse(cc.epochStarted());
        assertEquals(CongestionMode.SLOW_START, cc.mode());
        while (!cc.epochStarted()) {
            link.step(); // slow start back to ssthresh = 84000, then congestion avoidance
        }
        // RFC 9438 §4.8: K = 0 and W_max = the window at the start of congestion avoidance
        assertEquals(0.0, cc.k());
        assertTrue(cc.wMax() >= 84_000 && cc.wMax() <= link.cwnd(), "W_max " + cc.wMax());
    }

    @Test
    void renoFriendlyRegionDominatesAtSmallBdp() {
        // 2 ms RTT, 20-packet window: Reno gains ~1 packet per ms while the cubic curve, with
        // K ≈ 2.2 s, has barely moved after one second.
        TestLink link = link(2 * MS);
        Cubic cc = cubic(link);
        link.runUntilWindow(20L * MSS, SECOND);
        long peak = link.cwnd();
        link.loseOldest();
        link.runUntil(link.now() + SECOND);
        double t = (link.now() - cc.epochStartNanos()) / 1e9;
        assertTrue(t < cc.k(), "still before the plateau: t " + t + " K " + cc.k());
        assertTrue(cc.wCubic(t) < peak, "the curve alone would still be below W_max");
        assertTrue(link.cwnd() > 5 * peak, "cwnd " + link.cwnd() + " vs peak " + peak);
        assertEquals(cc.renoEstimate(), link.cwnd(), 1.0, "window follows W_est");
    }

    /** A 100 ms path grown to 200 packets, its oldest packet lost, then run on for 2 s. */
    private static TestLink twoSecondsAfterALossAt200Packets() {
        TestLink link = link(100 * MS);
        link.runUntilWindow(200L * MSS, 10 * SECOND);
        link.loseOldest();
        link.runUntil(link.now() + 2 * SECOND);
        return link;
    }

    @Test
    void idleTimeDoesNotAdvanceTheCurve() {
        TestLink link = twoSecondsAfterALossAt200Packets();
        Cubic cc = cubic(link);
        link.drain();
        long beforeIdle = link.cwnd();
        long epochBefore = cc.epochStartNanos();
        link.advanceTo(link.now() + 10 * SECOND); // quiet: nothing in flight
        link.runUntil(link.now() + 200 * MS);
        // Unshifted, t would be ~12 s, far past K ≈ 5.3 s, and the window would grow 1.5× per RTT.
        assertTrue(link.cwnd() < beforeIdle * 1.1, "cwnd " + beforeIdle + " -> " + link.cwnd());
        assertTrue(cc.epochStartNanos() - epochBefore >= 9 * SECOND, "epoch shifted by the idle time");
    }

    @Test
    void applicationLimitedTimeDoesNotAdvanceTheCurve() {
        TestLink link = twoSecondsAfterALossAt200Packets();
        Cubic cc = cubic(link);
        long before = link.cwnd();
        long epochBefore = cc.epochStartNanos();
        link.appLimitBytes = before / 4; // a trickle: the window is under-utilised
        link.runUntil(link.now() + 10 * SECOND);
        // only the acks for the window already in flight when the limit began may grow it
        assertTrue(link.cwnd() <= before * 1.02, "growth while application limited: " + before + " -> " + link.cwnd());
        before = link.cwnd();
        link.appLimitBytes = 0;
        link.runUntil(link.now() + 300 * MS);
        assertTrue(link.cwnd() < before * 1.2, "cwnd " + before + " -> " + link.cwnd());
        assertTrue(cc.epochStartNanos() - epochBefore >= 9 * SECOND, "epoch shifted by the limited time");
    }
}
