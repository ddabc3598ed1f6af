package dev.ccagent.sim;

import org.junit.jupiter.api.Test;

import java.util.Locale;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Simulator acceptance tests of issue #15 (algorithms against the reference implementations).
 * Every run is deterministic (fixed seeds); each test prints what it measured, and each failed
 * before the fix it pins (see the commit that added it). So every bound below fails with odds 0: the
 * printed figures were identical in 13 gate runs (2026-12-04); the tightest are noted beside their bounds.
 */
class Issue15AcceptanceTest {

    static final long S = 1_000_000_000L;
    static final long MS = 1_000_000L;

    static void report(String format, Object... args) {
        System.out.println("[issue15] " + String.format(Locale.ROOT, format, args));
    }

    static SimulationResult pair(String a, String b, long rate, long rttMs, double bufferBdp, long seconds) {
        return new Simulator(SimulationConfig.builder()
                .rateBitsPerSecond(rate).rttNanos(rttMs * MS).bufferBdp(bufferBdp)
                .flow(FlowConfig.of(a)).flow(FlowConfig.of(b))
                .durationNanos(seconds * S).build()).run();
    }

    // ------------------------------------------------------------------ fairness targets

    /**
     * Fairness targets of issue #15 that hold after the changes (50 Mbit/s, 40 ms, 40 s, both
     * flows from 0 s): bbr3 vs CUBIC Jain ≥ 0.85 in 1- and 2-BDP buffers, bbr3 vs bbr3 ≥ 0.95 in
     * 1-, 2- and 8-BDP buffers. Not met, hence not asserted: bbr3 vs CUBIC in an 8-BDP buffer
     * (Jain 0.64; see BENCHMARKS.md, "Issue #15").
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.CsvSource({"bbr3,cubic,1,0.85", "bbr3,cubic,2,0.85",
            "bbr3,bbr3,1,0.95", "bbr3,bbr3,2,0.95", "bbr3,bbr3,8,0.95"})
    void fairnessThroughOneBottleneck(String a, String b, double bufferBdp, double target) {
        SimulationResult r = pair(a, b, 50_000_000, 40, bufferBdp, 40);
        double jain = r.jainFairness();
        report("%s vs %s 50Mbit/40ms %.0fBDP 40s: %.2f / %.2f Mbit/s, Jain %.3f (target %.2f)",
                a, b, bufferBdp, r.flow(0).goodputBps() / 1e6, r.flow(1).goodputBps() / 1e6, jain, target);
        assertTrue(jain >= target, "Jain " + jain);
        assertTrue(r.linkUtilization() > 0.95);
    }

    // ------------------------------------------------------------------ 2. BBRv3 loss response

    /**
     * bbr3 under random loss, 50 ms, 1-BDP buffer, 20 s. Targets of the issue: at 1% ≥ 90% of
     * link·(1−p) at 20 and 50 Mbit/s; at 2% ≥ 85%. <b>Not met</b>: measured 86.0% and 82.1% at 1%,
     * 59.9% and 70.2% at 2%. With the draft's loss response in place (no cwnd cut in fast
     * recovery), what remains is the draft's own lower bounds: each round with a loss sets
     * inflight_lo/bw_lo to the latest round's delivery, which under random loss is (1 − p) of the
     * previous round's (and 1% pacing margin), so the model ratchets down between probes (2–3 s).
     * The test guards the measured improvement; before the fix: 53.9%, 76.4%, 46.4%, 39.1%, each
     * below these bounds. Since issue 26 (no lower-bound ratchet in PROBE_BW on random loss) the
     * targets are met and asserted at their own bounds by {@code RandomLossGoodputAndFairnessTest};
     * these older, lower guards stay as they were.
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.CsvSource({"20000000,0.01,0.84", "50000000,0.01,0.80",
            "20000000,0.02,0.55", "50000000,0.02,0.65"})
    void bbr3KeepsTheLinkUnderRandomLoss(long rate, double loss, double share) {
        SimulationResult.FlowResult f = new Simulator(SimulationConfig.builder()
                .rateBitsPerSecond(rate).rttNanos(50 * MS).bufferBdp(1.0).lossProbability(loss).seed(7)
                .flow(FlowConfig.of("bbr3")).durationNanos(20 * S).build()).run().flow(0);
        double target = share * rate * (1 - loss);
        report("bbr3 %.0f%% loss %d Mbit/s 50ms 1BDP 20s: %.2f Mbit/s = %.1f%% of link*(1-p) (guard %.0f%%)",
                100 * loss, rate / 1_000_000, f.goodputBps() / 1e6, 100 * f.goodputBps() / (rate * (1 - loss)),
                100 * share);
        assertTrue(f.goodputBps() >= target, "goodput " + f.goodputBps() + " < " + target);
    }

    // ------------------------------------------------------------------ 6. low-RTT floor

    /**
     * 1 Gbit/s, 300 µs (a LAN), 1-BDP buffer, 2 s: the 1 ms RTT floor of low-RTT leniency applies
     * only at min RTT ≤ 128 µs, as its option text says, so a 300 µs path keeps no standing queue:
     * queue p50 ≤ 10% of the base RTT for bbr1, loss < 1%. Before: the floor applied below 1 ms, bbr1
     * sized its window from 1 ms (queue p50 0.3 ms = the whole buffer, 5.8% loss).
     * bbr3: ≤ 30% of the base RTT. Its cut of bw_lo/inflight_lo on every loss round (the draft's text)
     * kept this 31-packet buffer nearly empty (9 µs), and is the rule that cost it 15-40% of the link
     * under 1-2% random loss; since it cuts in PROBE_BW only on losses beyond 2% of a round (issue 26,
     * see Bbr3 and BENCHMARKS.md), its queue here is 73 µs at 0.53% loss and unchanged goodput. The
     * floor this test was written for would still fail it (the whole buffer, 300 µs).
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.CsvSource({"bbr1,30000", "bbr3,90000"})
    void lanPathKeepsNoStandingQueue(String algo, long queueBoundNanos) {
        SimulationResult.FlowResult f = new Simulator(SimulationConfig.builder()
                .rateBitsPerSecond(1_000_000_000L).rttNanos(300_000).bufferBdp(1.0)
                .flow(FlowConfig.of(algo)).durationNanos(2 * S).build()).run().flow(0);
        long p50 = f.queueDelayPercentile(0.5);
        report("%s 1Gbit/300us 1BDP 2s: goodput %.1f Mbit/s, queue p50 %.1f us, loss %.2f%%",
                algo, f.goodputBps() / 1e6, p50 / 1e3, 100 * f.lossRate());
        assertTrue(p50 <= queueBoundNanos, "queue p50 " + p50 + " ns");
        assertTrue(f.lossRate() < 0.01, "loss " + f.lossRate());
        assertTrue(f.goodputBps() > 0.9e9, "goodput " + f.goodputBps());
    }

    // ------------------------------------------------------------------ 7. app-limited growth

    /**
     * An application writing one 1200-byte packet every millisecond (9.6 Mbit/s) on a 20 Mbit/s,
     * 40 ms path for 20 s keeps about 48 kB in flight. RFC 9002 §7.8 and RFC 9438 §5.8: the
     * window must not grow while under-utilised: it ends within 1.25× the most that was ever in
     * flight (the backlog of the first round trips, sent window-limited, grows it legitimately),
     * and it does not change from 2 s to the end. Before: the app-limited flag cleared on every
     * send and growth stopped only below half the window: 163 kB for at most 96 kB in flight.
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"newreno", "cubic"})
    void windowDoesNotGrowWhileApplicationLimited(String algo) {
        long[] at2s = {0};
        long[] maxInflight = {0};
        SimulationResult.FlowResult f = new Simulator(SimulationConfig.builder()
                .rateBitsPerSecond(20_000_000).rttNanos(40 * MS).bufferBdp(1.0)
                .flow(FlowConfig.of(algo).appWrites(1200, MS)).durationNanos(20 * S)
                .sampleIntervalNanos(10 * MS)
                .observer(new SimulationObserver() {
                    @Override
                    public void onSample(long now, int flow, dev.ccagent.cc.CcSnapshot s, long q, long rtt) {
                        if (now <= 2 * S) {
                            at2s[0] = s.congestionWindow;
                        }
                        maxInflight[0] = Math.max(maxInflight[0], s.bytesInFlight);
                    }
                }).build()).run().flow(0);
        report("%s app-limited 9.6 Mbit/s on 20 Mbit/s/40ms: goodput %.2f Mbit/s, cwnd at 2 s %d B, at 20 s %d B,"
                        + " most in flight %d B",
                algo, f.goodputBps() / 1e6, at2s[0], f.finalState.congestionWindow, maxInflight[0]);
        assertTrue(f.finalState.congestionWindow <= 1.25 * maxInflight[0],
                "cwnd " + f.finalState.congestionWindow + " grew past 1.25x the most ever in flight " + maxInflight[0]);
        // equal, not below: 110,400 B at 2 s and at 20 s for both newreno and cubic; deterministic, so odds 0
        assertTrue(f.finalState.congestionWindow <= at2s[0], "cwnd grew from " + at2s[0] + " to "
                + f.finalState.congestionWindow + " while under-utilised");
        assertTrue(f.goodputBps() > 9_000_000, "the application's rate is delivered: " + f.goodputBps());
    }

    // ------------------------------------------------------------------ 4. reno-hbdp

    /**
     * reno-hbdp vs CUBIC, 100 Mbit/s, 200 ms, 1-BDP buffer, 60 s: Jain ≥ 0.8. Before (the 2021
     * pico, increase recomputed per ACK from the current srtt): 91.0 vs 6.7 Mbit/s, Jain 0.573.
     */
    @Test
    void highBdpRenoSharesWithCubic() {
        SimulationResult r = pair("reno-hbdp", "cubic", 100_000_000, 200, 1.0, 60);
        double jain = r.jainFairness();
        report("reno-hbdp vs cubic 100Mbit/200ms 1BDP 60s: %.2f / %.2f Mbit/s, Jain %.3f",
                r.flow(0).goodputBps() / 1e6, r.flow(1).goodputBps() / 1e6, jain);
        assertTrue(jain >= 0.8, "Jain " + jain);
    }

    // ------------------------------------------------------------------ issue #16: documented splits

    private static double bbr1Share(String other, boolean drainToTarget) {
        java.util.Map<String, String> opts = drainToTarget
                ? java.util.Map.of(dev.ccagent.cc.bbr.Bbr1.DRAIN_TO_TARGET, "on") : java.util.Map.of();
        SimulationResult r = new Simulator(SimulationConfig.builder()
                .rateBitsPerSecond(20_000_000).rttNanos(40 * MS).bufferBdp(2.0)
                .flow(FlowConfig.of("bbr1").options(opts)).flow(FlowConfig.of(other).startNanos(2 * S))
                .durationNanos(30 * S).build()).run();
        double a = r.flow(0).deliveredBetween(15 * S, 30 * S);
        double b = r.flow(1).deliveredBetween(15 * S, 30 * S);
        return a / (a + b);
    }

    /**
     * The bbr1 shares BENCHMARKS.md quotes (20 Mbit/s, 40 ms, 2-BDP buffer, second flow at 2 s,
     * 15–30 s), asserted with ±8 points: bbr1 vs CUBIC about 50% by default; with
     * drain-to-target about 37% vs CUBIC and 23% vs NewReno (issue #16 asked that these be
     * asserted or dropped; the figures are as measured after issue #15's changes).
     */
    @Test
    void documentedBbr1SharesHold() {
        double cubic = bbr1Share("cubic", false);
        double cubicDrain = bbr1Share("cubic", true);
        double renoDrain = bbr1Share("newreno", true);
        report("bbr1 share 20Mbit/40ms 2BDP 15-30s: vs cubic %.1f%%, drain-to-target vs cubic %.1f%%, vs newreno %.1f%%",
                100 * cubic, 100 * cubicDrain, 100 * renoDrain);
        // 50.0%, 37.5% and 22.6% in every run: deterministic, odds 0
        assertTrue(Math.abs(cubic - 0.50) <= 0.08, "vs cubic " + cubic);
        assertTrue(Math.abs(cubicDrain - 0.37) <= 0.08, "drain-to-target vs cubic " + cubicDrain);
        assertTrue(Math.abs(renoDrain - 0.23) <= 0.08, "drain-to-target vs newreno " + renoDrain);
    }
}
