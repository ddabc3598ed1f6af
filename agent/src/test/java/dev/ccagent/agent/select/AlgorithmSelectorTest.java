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
        // fixed ids 0..999, so this cannot flake either (odds 0)
        assertShare(canary, 1000, 0.5);
    }

    @Test
    void fullCanaryTakesEverything() {
        AgentConfig c = AgentArgs.parse("canary=cubic:100%").config();
        for (long h = 0; h < 1000; h++) {
            assertEquals("cubic", AlgorithmSelector.select(c, h * 0x9E3779B97F4A7C15L).algorithm());
        }
    }

    @Test
    void sipHashMatchesTheReferenceVector() {
        // SipHash-2-4 paper (Aumasson, Bernstein 2012), appendix A: key 00..0f, message 00..0e
        byte[] key = new byte[16];
        byte[] msg = new byte[15];
        for (int i = 0; i < 16; i++) {
            key[i] = (byte) i;
        }
        for (int i = 0; i < 15; i++) {
            msg[i] = (byte) i;
        }
        long k0 = java.nio.ByteBuffer.wrap(key, 0, 8).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong();
        long k1 = java.nio.ByteBuffer.wrap(key, 8, 8).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong();
        assertEquals(0xa129ca6149be45e5L, AlgorithmSelector.sipHash24(k0, k1, msg));
    }

    @Test
    void saltChangesTheAssignmentAndKeepsTheShares() {
        AgentConfig plain = AgentArgs.parse("canary=cubic:50%").config();
        AgentConfig salted = AgentArgs.parse("canary=cubic:50%;canary.salt=deployment-secret-1").config();
        AgentConfig other = AgentArgs.parse("canary=cubic:50%;canary.salt=deployment-secret-2").config();
        SplittableRandom random = new SplittableRandom(7);
        int n = 20_000;
        int differs = 0;
        int differsBetweenSalts = 0;
        int canary = 0;
        for (int i = 0; i < n; i++) {
            byte[] id = new byte[8];
            random.nextBytes(id);
            boolean p = !AlgorithmSelector.select(plain, AlgorithmSelector.hash(plain, id)).isStock();
            boolean s = !AlgorithmSelector.select(salted, AlgorithmSelector.hash(salted, id)).isStock();
            boolean o = !AlgorithmSelector.select(other, AlgorithmSelector.hash(other, id)).isStock();
            // deterministic under one salt
            assertEquals(s, !AlgorithmSelector.select(salted, AlgorithmSelector.hash(salted, id.clone())).isStock());
            differs += p != s ? 1 : 0;
            differsBetweenSalts += s != o ? 1 : 0;
            canary += s ? 1 : 0;
        }
        // independent assignments disagree on half the ids; seed 7 and fixed salts: the same counts every run, odds 0
        assertShare(differs, n, 0.5);
        assertShare(differsBetweenSalts, n, 0.5);
        assertShare(canary, n, 0.5);
        // unsalted stays the published FNV-1a assignment
        byte[] id = {9, 8, 7, 6, 5, 4, 3, 2};
        assertEquals(AlgorithmSelector.hash(id), AlgorithmSelector.hash(plain, id));
    }

    @Test
    void withoutTheSaltAClientCannotPickItsArm() {
        // a client picks ids it predicts (with the unsalted hash, everything it can compute) to be canary;
        // under a salt it does not know, those ids land in the canary arm at the canary's share, no more
        AgentConfig plain = AgentArgs.parse("canary=cubic:10%").config();
        AgentConfig salted = AgentArgs.parse("canary=cubic:10%;canary.salt=unknown-to-the-client").config();
        SplittableRandom random = new SplittableRandom(11);
        int picked = 0;
        int landed = 0;
        for (int i = 0; i < 200_000 && picked < 5_000; i++) {
            byte[] id = new byte[8];
            random.nextBytes(id);
            if (!AlgorithmSelector.select(plain, AlgorithmSelector.hash(id)).isStock()) {
                picked++;
                if (!AlgorithmSelector.select(salted, AlgorithmSelector.hash(salted, id)).isStock()) {
                    landed++;
                }
            }
        }
        assertEquals(5_000, picked);
        assertEquals(picked, countCanary(plain, 11, 5_000), "the unsalted prediction is exact");
        assertShare(landed, picked, 0.10); // seed 11 and a fixed salt: the same count every run, odds 0
    }

    private static int countCanary(AgentConfig plain, long seed, int want) {
        SplittableRandom random = new SplittableRandom(seed);
        int hits = 0;
        for (int i = 0; i < 200_000 && hits < want; i++) {
            byte[] id = new byte[8];
            random.nextBytes(id);
            if (!AlgorithmSelector.select(plain, AlgorithmSelector.hash(plain, id)).isStock()) {
                hits++;
            }
        }
        return hits;
    }

    @Test
    void saltIsValidatedAndNeverShown() {
        AgentArgs.Result r = AgentArgs.parse("canary.salt=short");
        assertTrue(!r.ok() && r.problems().get(0).contains("(hidden)") && !r.problems().get(0).contains("short"),
                r.problems().toString());
    }

    private static void assertShare(int count, int n, double p) {
        double sigma = Math.sqrt(n * p * (1 - p));
        assertTrue(Math.abs(count - n * p) <= 5 * sigma, count + " of " + n + " for p=" + p);
    }
}
