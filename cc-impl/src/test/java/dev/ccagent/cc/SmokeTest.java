package dev.ccagent.cc;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

class SmokeTest {
    @Test
    void registryCreatesNewReno() {
        assertEquals("newreno", Algorithms.create("newreno", Map.of()).algorithm());
    }
}
