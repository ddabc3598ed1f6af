package dev.ccagent.cc;

import dev.ccagent.cc.registry.Algorithms;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AlgorithmProviderTest {

    @Test
    void providersOnTheClassPathAddAlgorithms() {
        assertTrue(Algorithms.exists("test-provided"), Algorithms.names().toString());
        CongestionController cc = Algorithms.create("test-provided", Map.of("mss", "1252"));
        assertEquals("test-provided", cc.algorithm());
        assertEquals("newreno", Algorithms.names().get(0), "built-ins come first");
    }

    @Test
    void aClashWithABuiltInIsReportedAndTheBuiltInWins() {
        assertTrue(Algorithms.extensionProblems().stream().anyMatch(p -> p.contains("'newreno' clashes")),
                Algorithms.extensionProblems().toString());
        assertEquals("newreno", Algorithms.create("newreno", Map.of()).algorithm());
    }
}
