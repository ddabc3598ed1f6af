package dev.ccagent.cc.bbr;

import dev.ccagent.cc.Algorithms;
import dev.ccagent.cc.CcSnapshot;
import dev.ccagent.cc.CongestionMode;
import org.junit.jupiter.api.Test;

import java.util.Map;

class ProbeScratchTest {
    @Test
    void trace() {
        for (String algo : new String[] {"bbr3"}) {
            PipeHarness h = new PipeHarness(Algorithms.create(algo, Map.of("seed", "3")), 20_000_000L, 40_000_000L, 100_000);
            final long[] nextPrint = {0};
            h.run(12_000_000_000L, x -> {
                CcSnapshot s = x.snapshot();
                if (x.now >= nextPrint[0]) {
                    System.out.printf("%s t=%.3f %s inflight=%d sent=%d lost=%d%n", algo, x.now / 1e9, s, x.inflight, x.sent, x.lost);
                    nextPrint[0] = x.now + 500_000_000L;
                }
            });
        }
    }
}
