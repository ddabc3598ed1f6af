package dev.ccagent.cc.bbr;

import dev.ccagent.cc.AckEvent;
import dev.ccagent.cc.registry.Algorithms;
import dev.ccagent.cc.CongestionController;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The quic-go issue 4054 regression suite: a BBR pacer must never get rate 0 and never answer a
 * send time in the past; without budget its answer is strictly in the future. Each test asserts
 * the pacer's answers directly. Deterministic: simulated times and the controllers' default seed (1),
 * the same answers every run, odds 0.
 */
class ZeroRateImmunityTest {

    private static final int MSS = 1200;
    private static final long IW = 12_000; // RFC 9002 default for 1200 B: min(10·1200, max(14720, 2400))
    private static final long INITIAL_RTT = 333_000_000L;

    private static double startupGain(String algo) {
        return algo.equals("bbr1") ? Bbr1.HIGH_GAIN : Bbr3.STARTUP_PACING_GAIN;
    }

    private static CongestionController create(String algo) {
        return Algorithms.create(algo, Map.of());
    }

    /** Asserts the pacer invariants at {@code now}, and that draining the budget pushes the answer into the future. */
    private static void assertPacerSane(CongestionController cc, long now, long[] pn, long inflight) {
        assertTrue(cc.pacingRate() > 0, "rate " + cc.pacingRate());
        long t = cc.earliestSendTime(now, MSS);
        assertTrue(t >= now, "earliestSendTime " + t + " < now " + now);
        // spend whatever budget there is at this instant: must run out in a bounded number of sends
        int sends = 0;
        while (cc.earliestSendTime(now, MSS) == now) {
            cc.onPacketSent(now, pn[0]++, MSS, inflight += MSS, true);
            assertTrue(++sends < 1000, "budget never ran out: spin");
        }
        long next = cc.earliestSendTime(now, MSS);
        assertTrue(next > now, "no budget, yet earliestSendTime == now");
        assertTrue(cc.pacingRate() > 0);
    }

    @ParameterizedTest
    @ValueSource(strings = {"bbr1", "bbr3"})
    void beforeAnySampleTheRateIsStartupGainTimesInitialWindowOverInitialRtt(String algo) {
        CongestionController cc = create(algo);
        long expected = (long) (startupGain(algo) * IW * 1e9 / INITIAL_RTT);
        assertEquals(expected, cc.pacingRate(), expected * 0.001);
        assertEquals(0, cc.snapshot(new dev.ccagent.cc.CcSnapshot()).bandwidthEstimate);
        long now = 5_000_000_000L;
        assertEquals(now, cc.earliestSendTime(now, MSS), "the initial window may leave at once");
        assertPacerSane(cc, now, new long[] {0}, 0);
    }

    @ParameterizedTest
    @ValueSource(strings = {"bbr1", "bbr3"})
    void firstAckBeforeAnySampleKeepsAPositiveRate(String algo) {
        CongestionController cc = create(algo);
        long t0 = 1_000_000L;
        cc.onPacketSent(t0, 0, MSS, MSS, true);
        AckEvent ack = new AckEvent();
        ack.reset(t0, MSS); // acked at the very instant it was sent, no RTT sample
        ack.addPacket(0, t0, MSS);
        cc.onAck(ack);
        assertTrue(cc.pacingRate() > 0);
        assertEquals(0, cc.snapshot(new dev.ccagent.cc.CcSnapshot()).bandwidthEstimate,
                "a zero-interval sample must not be stored");
        long expected = (long) (startupGain(algo) * IW * 1e9 / INITIAL_RTT);
        assertEquals(expected, cc.pacingRate(), expected * 0.001, "still the fallback rate");
        assertPacerSane(cc, t0, new long[] {1}, 0);
    }

    @ParameterizedTest
    @ValueSource(strings = {"bbr1", "bbr3"})
    void manyAcksWithIdenticalTimestampsNeverZeroTheRate(String algo) {
        CongestionController cc = create(algo);
        AckEvent ack = new AckEvent();
        long t = 42_000_000L;
        long pn = 0;
        long inflight = 0;
        for (int round = 0; round < 500; round++) {
            // a burst sent and acked at the same clock reading (loopback, coarse clock)
            for (int i = 0; i < 4; i++) {
                cc.onPacketSent(t, pn + i, MSS, inflight += MSS, true);
            }
            for (int i = 0; i < 4; i++) {
                ack.reset(t, inflight);
                ack.addPacket(pn + i, t, MSS);
                cc.onAck(ack);
                inflight -= MSS;
                assertTrue(cc.pacingRate() > 0, "rate 0 after identical-timestamp ack");
                assertTrue(cc.earliestSendTime(t, MSS) >= t);
            }
            pn += 4;
        }
        assertEquals(0, cc.snapshot(new dev.ccagent.cc.CcSnapshot()).bandwidthEstimate);
        assertPacerSane(cc, t, new long[] {pn}, inflight);
    }

    @ParameterizedTest
    @ValueSource(strings = {"bbr1", "bbr3"})
    void rttSamplesOfZeroAndOneMicrosecondKeepThePacerSane(String algo) {
        CongestionController cc = create(algo);
        AckEvent ack = new AckEvent();
        long t = 7_000_000_000L;
        long pn = 0;
        long inflight = 0;
        for (int i = 0; i < 2000; i++) {
            cc.onPacketSent(t, pn, MSS, inflight += MSS, true);
            boolean zero = i % 2 == 0;
            long ackTime = zero ? t : t + 1_000;
            ack.reset(ackTime, inflight);
            ack.addPacket(pn, t, MSS);
            ack.latestRttNanos = zero ? 0 : 1_000; // "no sample" and 1 µs
            ack.minRttNanos = 1_000;
            ack.smoothedRttNanos = 1_000;
            cc.onAck(ack);
            inflight -= MSS;
            t = ackTime;
            pn++;
            long rate = cc.pacingRate();
            assertTrue(rate > 0, "rate " + rate + " at step " + i);
            long e = cc.earliestSendTime(t, MSS);
            assertTrue(e >= t, "past send time at step " + i);
        }
        long min = cc.snapshot(new dev.ccagent.cc.CcSnapshot()).minRttNanos;
        assertEquals(1_000, min);
        assertPacerSane(cc, t, new long[] {pn}, inflight);
    }

    @ParameterizedTest
    @ValueSource(strings = {"bbr1", "bbr3"})
    void lossesBeforeAnySampleKeepAPositiveRate(String algo) {
        CongestionController cc = create(algo);
        long t = 1_000L;
        long inflight = 0;
        for (int i = 0; i < 10; i++) {
            cc.onPacketSent(t, i, MSS, inflight += MSS, true);
        }
        dev.ccagent.cc.LossEvent loss = new dev.ccagent.cc.LossEvent();
        loss.reset(t + 1_000_000_000L, inflight);
        for (int i = 0; i < 10; i++) {
            loss.addPacket(i, t, MSS);
        }
        loss.persistentCongestion = true;
        cc.onPacketsLost(loss);
        assertTrue(cc.congestionWindow() >= 4L * MSS);
        assertPacerSane(cc, t + 1_000_000_000L, new long[] {10}, 0);
    }

    @ParameterizedTest
    @ValueSource(strings = {"bbr1", "bbr3"})
    void loopbackPathWithMicrosecondRttDoesNotSpin(String algo) {
        // 10 Gbit/s, 20 µs: a localhost-like path run for 50 ms of simulated time
        PipeHarness h = new PipeHarness(create(algo), 10_000_000_000L, 20_000, 1_000_000);
        h.run(50_000_000L, x -> {
            assertTrue(x.cc.pacingRate() > 0);
        });
        assertTrue(h.sent > 10_000, "moved data: " + h.sent);
        assertTrue(h.maxSendsAtOneInstant < 100, "burst " + h.maxSendsAtOneInstant);
        assertTrue(h.snapshot().bandwidthEstimate > 0);
    }
}
