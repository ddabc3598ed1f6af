package dev.ccagent.agent.instrument;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** What a missing requirement says: the library's class, or the agent's own, which names the cause. */
class RequirementTest {

    private static final String HOOKS = "dev.ccagent.agent.kwik.KwikHooks";

    @Test
    void theAgentsClassIsVisibleFromItsOwnLoader() {
        assertEquals(List.of(), Requirement.missingIn(List.of(Requirement.agentType(HOOKS)),
                RequirementTest.class.getClassLoader()));
    }

    @Test
    void aLoaderThatDoesNotDelegateToTheApplicationLoaderIsNamedAsTheCause() {
        assertEquals(List.of("the agent's classes are not visible from this class loader (" + HOOKS + " not found: the"
                        + " loader does not delegate to the application class loader, where the agent is)"),
                Requirement.missingIn(List.of(Requirement.agentType(HOOKS)), ClassLoader.getPlatformClassLoader()));
    }

    @Test
    void aLibrarysClassIsReportedByName() {
        assertEquals(List.of("class tech.kwik.core.cc.CongestionController not found"),
                Requirement.missingIn(List.of(Requirement.type("tech.kwik.core.cc.CongestionController")),
                        ClassLoader.getPlatformClassLoader()));
    }
}
