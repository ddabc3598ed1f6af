package dev.ccagent.cc.bbr;

import dev.ccagent.cc.registry.Algorithms;
import dev.ccagent.cc.CongestionMode;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue #15 item 1: bbr3's data-rate sanity check (picoquic {@code BBRCheckPathSaturated}) may
 * fire only in PROBE_BW DOWN or CRUISE, never while probing (UP, REFILL), and it enters DRAIN.
 * Driven through a capacity drop (20 → 4 Mbit/s, 40 ms, 1 MB buffer) that makes it fire.
 * Deterministic ({@link PipeHarness}, seed 1): "0 while probing, 1 in DOWN/CRUISE, 1 entered DRAIN"
 * in every run (identical in 13 gate runs, 2026-12-04), odds 0.
 */
class SanityCheckPhaseTest {

    private static final long MS = 1_000_000L;
    private static final long S = 1_000 * MS;

    @Test
    void bbr3SanityCheckFiresOnlyOutsideProbingAndEntersDrain() {
        Bbr3 cc = (Bbr3) Algorithms.create("bbr3", Map.of());
        PipeHarness h = new PipeHarness(cc, 20_000_000, 40 * MS, 1_000_000);
        h.run(3 * S, null);
        PipeHarness slow = h.withRate(4_000_000);
        long[] counts = new long[3]; // fired while probing, fired elsewhere, fired into DRAIN
        CongestionMode[] before = {cc.mode()};
        long[] resets = {cc.sanityResets()};
        slow.run(slow.now + 20 * S, x -> {
            if (cc.sanityResets() > resets[0]) {
                CongestionMode m = before[0];
                if (m == CongestionMode.PROBE_BW_UP || m == CongestionMode.PROBE_BW_REFILL) {
                    counts[0]++;
                } else {
                    counts[1]++;
                }
                if (cc.mode() == CongestionMode.DRAIN) {
                    counts[2]++;
                }
                resets[0] = cc.sanityResets();
            }
            before[0] = cc.mode();
        });
        System.out.printf("[issue15] bbr3 sanity check after 20->4 Mbit/s: %d while probing, %d in DOWN/CRUISE,"
                + " %d entered DRAIN%n", counts[0], counts[1], counts[2]);
        assertEquals(0, counts[0], "fired while probing (UP/REFILL)");
        assertTrue(counts[1] > 0, "never fired");
        assertEquals(counts[1], counts[2], "every firing enters DRAIN");
    }
}
