package dev.ccagent.cc.registry;

import dev.ccagent.cc.CcSnapshot;
import dev.ccagent.cc.CongestionController;
import dev.ccagent.cc.CcOptions;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static dev.ccagent.cc.ConfigErrors.assertRejected;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AlgorithmsTest {

    @Test
    void everyRegisteredAlgorithmCanBeCreatedWithDefaults() {
        for (String name : Algorithms.names()) {
            CongestionController cc = Algorithms.create(name, Map.of());
            assertEquals(name, cc.algorithm());
            assertTrue(cc.congestionWindow() > 0, name);
            assertTrue(cc.pacingRate() > 0, name + " pacing rate before any ack");
            assertEquals(name, cc.snapshot(new CcSnapshot()).algorithm);
        }
    }

    @Test
    void unknownAlgorithmNamesTheKnownOnes() {
        assertRejected(() -> Algorithms.create("bbr9", Map.of()), "'bbr9'", "newreno");
    }

    @Test
    void unknownOptionListsValidOnes() {
        assertRejected(() -> Algorithms.options("newreno", Map.of("quantum", "0.002")),
                "unknown option quantum", "quantum-ratio");
    }

    @Test
    void badValuesNameTheOptionAndTheRange() {
        assertRejected(() -> Algorithms.options("newreno", Map.of("quantum-ratio", "0")), "quantum-ratio", "(0, 1]");
        assertRejected(() -> Algorithms.options("newreno", Map.of("pacing", "maybe")), "on/off");
        assertRejected(() -> Algorithms.options("newreno", Map.of("mss", "900")), "mss");
        assertRejected(() -> Algorithms.options("newreno", Map.of("initial-rtt", "soon")), "initial-rtt");
    }

    @Test
    void typedOptionsAreParsed() {
        CcOptions o = Algorithms.options("newreno",
                Map.of("mss", "1350", "initial-window", "32", "initial-rtt", "100ms", "quantum-ratio", "0.002",
                        "pacing", "off"));
        assertEquals(1350, o.mss());
        assertEquals(32 * 1350, o.initialWindowBytes());
        assertEquals(100_000_000L, o.initialRttNanos());
        assertEquals(0.002, o.quantumRatio());
        assertFalse(o.pacing());
        assertEquals(14_720, Algorithms.options("newreno", Map.of("mss", "1472")).initialWindowBytes(),
                "RFC 9002 initial window min(10*MDS, max(14720, 2*MDS))");
        assertEquals(12_000, Algorithms.options("newreno", Map.of()).initialWindowBytes());
    }
}
