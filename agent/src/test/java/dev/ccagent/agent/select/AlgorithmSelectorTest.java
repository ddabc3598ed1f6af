package dev.ccagent.agent.select;

import dev.ccagent.agent.config.AgentArgs;
import dev.ccagent.agent.config.AgentConfig;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AlgorithmSelectorTest {

    @Test
    void splitMatchesConfiguredSharesOverManyIds() {
        AgentConfig c = AgentArgs.parse("cc=newreno;canary=cubic:30%,reno-hbdp:10%").config();
        Map<String, Integer> counts = new HashMap<>();
        SplittableRandom random = new SplittableRandom(42);
        int n = 100_000;
        for (int i = 0; i < n; i++) {
            byte[] id = new byte[8];
            random.nextBytes(id);
            counts.merge(AlgorithmSelector.select(c, AlgorithmSelector.hash(id)).algorithm(), 1, Integer::sum);
        }
        // within 5 standard deviations of a binomial; the seed is fixed, so this cannot flake
        assertShare(counts.get("cubic"), n, 0.30);
        assertShare(counts.get("reno-hbdp"), n, 0.10);
        assertShare(counts.get("newreno"), n, 0.60);
    }

    @Test
    void sameIdSameArmAndSequentialIdsSpread() {
        AgentConfig c = AgentArgs.parse("canary=cubic:50%").config();
        byte[] id = {1, 2, 3, 4, 5, 6, 7, 8};
        AgentConfig.Arm first = AlgorithmSelector.select(c, AlgorithmSelector.hash(id));
        for (int i = 0; i < 10; i++) {
            assertSame(first, AlgorithmSelector.select(c, AlgorithmSelector.hash(id.clone())));
        }
        int canary = 0;
        for (int i = 0; i < 1000; i++) {
            byte[] seq = {0, 0, 0, 0, 0, 0, (byte) (i >> 8), (byte) i};
            if (!AlgorithmSelector.select(c, AlgorithmSelector.hash(seq)).isStock()) {
                canary++;
            }
        }
        assertShare(canary, 1000, 0.5);
    }

    @Test
    void fullCanaryTakesEverything() {
        AgentConfig c = AgentArgs.parse("canary=cubic:100%").config();
        for (long h = 0; h < 1000; h++) {
            assertEquals("cubic", AlgorithmSelector.select(c, h * 0x9E3779B97F4A7C15L).algorithm());
        }
    }

    private static void assertShare(int count, int n, double p) {
        double sigma = Math.sqrt(n * p * (1 - p));
        assertTrue(Math.abs(count - n * p) <= 5 * sigma, count + " of " + n + " for p=" + p);
    }
}
