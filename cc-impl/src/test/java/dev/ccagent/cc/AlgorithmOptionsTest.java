package dev.ccagent.cc;

import dev.ccagent.cc.registry.Algorithms;
import dev.ccagent.cc.cubic.Cubic;
import dev.ccagent.cc.reno.HighBdpReno;
import dev.ccagent.cc.reno.NewReno;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;
import java.util.Map;

import static dev.ccagent.cc.ConfigErrors.assertRejected;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The registry and option validation for the loss-based algorithms. */
class AlgorithmOptionsTest {

    @Test
    void registryListsTheLossBasedAlgorithms() {
        assertTrue(Algorithms.names().containsAll(List.of("newreno", "cubic", "reno-hbdp")));
        assertInstanceOf(Cubic.class, Algorithms.create("cubic", Map.of()));
        assertInstanceOf(HighBdpReno.class, Algorithms.create("reno-hbdp", Map.of()));
        assertInstanceOf(NewReno.class, Algorithms.create("newreno", Map.of()));
        for (String name : List.of("newreno", "cubic", "reno-hbdp")) {
            assertEquals(name, Algorithms.create(name, Map.of()).algorithm());
        }
    }

    @Test
    void unknownAlgorithmIsNamed() {
        assertRejected(() -> Algorithms.create("cubik", Map.of()), "cubik", "cubic");
    }

    @ParameterizedTest
    @ValueSource(strings = {"newreno", "cubic", "reno-hbdp"})
    void unknownOptionIsNamed(String algorithm) {
        CcConfigException e = assertRejected(() -> Algorithms.create(algorithm, Map.of("betta", "0.7")), "betta");
        assertTrue(e.getMessage().contains("beta"), "lists the valid keys: " + e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"newreno", "cubic", "reno-hbdp"})
    void badBetaIsNamed(String algorithm) {
        for (String bad : List.of("abc", "0", "1.5", "-0.2")) {
            assertRejected(() -> Algorithms.create(algorithm, Map.of("beta", bad)), "beta");
        }
    }

    @Test
    void cubicFastConvergenceOption() {
        assertRejected(() -> Algorithms.create("cubic", Map.of("fast-convergence", "maybe")), "fast-convergence");
        CcOptions off = Algorithms.options("cubic", Map.of("fast-convergence", "off"));
        assertEquals(false, off.getBoolean(Cubic.OPT_FAST_CONVERGENCE));
        CcOptions defaults = Algorithms.options("cubic", Map.of());
        assertEquals(true, defaults.getBoolean(Cubic.OPT_FAST_CONVERGENCE));
        assertEquals(0.7, defaults.getDouble(Cubic.OPT_BETA));
        assertEquals(0.7, Algorithms.options("reno-hbdp", Map.of()).getDouble(HighBdpReno.OPT_BETA));
    }

    @Test
    void commonOptionsApplyToTheNewAlgorithms() {
        CongestionController cc = Algorithms.create("cubic", Map.of("mss", "1400", "initial-window", "4"));
        assertEquals(5600, cc.congestionWindow());
        assertRejected(() -> Algorithms.create("reno-hbdp", Map.of("mss", "100")), "mss");
    }
}
