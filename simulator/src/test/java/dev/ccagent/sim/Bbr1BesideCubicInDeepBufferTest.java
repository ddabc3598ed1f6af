package dev.ccagent.sim;

import org.junit.jupiter.api.Test;

import java.util.Locale;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * bbr1 beside CUBIC in an 8-BDP buffer (50 Mbit/s, 40 ms, both from 0 s, seed 1) no longer has
 * its estimate reset by the data-rate sanity check, which Linux tcp_bbr.c and quiche's
 * bbr_sender.cc do not have (off by default for bbr1 since issue #26).
 *
 * <p>Issue #26's targets are ≥ 20% of the link over 60 s and ≥ 35% over 120 s; <b>not met</b>:
 * measured 20.1% and 28.2% (seeds 2 and 3: 14-15% and 23-26%). What remains is BBRv1's own
 * deep-buffer starvation, which Linux and quiche share: until the min RTT expires (10 s) the
 * window is 2 × bw × 40 ms while CUBIC's queue holds the RTT near 300 ms, so each round delivers
 * about a quarter of the estimate and the 10-round max filter follows it down (18 → 1.5 Mbit/s
 * by 10 s). This test guards the part that was fixed: with the check (before) 10.3% over 60 s.
 */
class Bbr1BesideCubicInDeepBufferTest {

    @Test
    void bbr1KeepsMoreOfTheLinkBesideCubicWithoutTheSanityCheck() {
        SimulationResult r = new Simulator(SimulationConfig.builder()
                .rateBitsPerSecond(50_000_000).rttNanos(40_000_000L).bufferBdp(8.0).seed(1)
                .flow(FlowConfig.of("bbr1")).flow(FlowConfig.of("cubic"))
                .durationNanos(60_000_000_000L).build()).run();
        double share = r.flow(0).goodputBps() / 50e6;
        System.out.println(String.format(Locale.ROOT,
                "[deep-buffer] bbr1 vs cubic 50Mbit/40ms 8BDP 60s: %.2f / %.2f Mbit/s, bbr1 %.1f%% of the link",
                r.flow(0).goodputBps() / 1e6, r.flow(1).goodputBps() / 1e6, 100 * share));
        assertTrue(share >= 0.16, "bbr1 share " + share); // 20.1% every run (seed 1, 13 gate runs): odds 0
    }
}
