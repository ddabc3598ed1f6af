package dev.ccagent.agent.runtime;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The verdicts the chunk-start events repeat are bounded as status's lines are: the last {@link AgentRuntime#MAX_MODULES}. */
class LoaderVerdictsBoundTest {

    @Test
    void loaderChurnKeepsOnlyTheLatestVerdicts() {
        int n = AgentRuntime.MAX_MODULES + 50;
        for (int i = 0; i < n; i++) {
            String loader = "churn-" + i + "@0";
            AgentRuntime.recordModule("test module in " + loader + ": applied",
                    LoaderVerdict.now("test", "test module", null, loader, true, ""));
        }
        List<LoaderVerdict> kept = AgentRuntime.loaderVerdicts();
        assertEquals(AgentRuntime.MAX_MODULES, kept.size());
        assertEquals("churn-" + (n - AgentRuntime.MAX_MODULES) + "@0", kept.get(0).classLoader(), "the oldest dropped first");
        assertEquals("churn-" + (n - 1) + "@0", kept.get(kept.size() - 1).classLoader());
        assertEquals(AgentRuntime.MAX_MODULES, AgentRuntime.moduleVerdicts().size(), "as many as status's lines");
    }
}
