package dev.ccagent.agent.runtime;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The reason a ModuleVerdict event carries for an applied verdict: what its log line says beyond "applied". */
class LoaderVerdictTest {

    @Test
    void theDetailOfEachFormOfAppliedVerdict() {
        assertEquals("", LoaderVerdict.appliedDetail("applied"));
        assertEquals("the algorithm choice only; pacing are skipped there: x",
                LoaderVerdict.appliedDetail("applied: the algorithm choice only; pacing are skipped there: x"));
        assertEquals("on by default: kwik's own race (see docs/kwik.md)",
                LoaderVerdict.appliedDetail("applied (on by default: kwik's own race (see docs/kwik.md))"));
        assertEquals("controller swap skipped (a); observing: spin detector",
                LoaderVerdict.appliedDetail("controller swap skipped (a); observing: spin detector"));
    }
}
