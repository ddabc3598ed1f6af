package dev.ccagent.it;

import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.DynamicType;
import net.bytebuddy.utility.JavaModule;

/**
 * What a test-only agent (a widener, the clock stepper) says on stderr about its own transformations:
 * {@code [TAG] VERB type} for each type changed, {@code [TAG] could not instrument type: error} for
 * each failure. Tests assert the first, so that a race set up by the agent is known to be there.
 */
public final class TestAgentListener extends AgentBuilder.Listener.Adapter {

    private final String tag;
    private final String verb;

    public TestAgentListener(String tag, String verb) {
        this.tag = tag;
        this.verb = verb;
    }

    /**
     * The agent builder of a widener: it changes kwik's classes in place (method bodies only, no format change)
     * and says {@code [tag] widened type} for each.
     */
    public static AgentBuilder widener(String tag) {
        return new AgentBuilder.Default()
                .disableClassFormatChanges()
                .with(AgentBuilder.TypeStrategy.Default.REDEFINE)
                .with(new TestAgentListener(tag, "widened"));
    }

    @Override
    public void onError(String typeName, ClassLoader loader, JavaModule module, boolean loaded, Throwable error) {
        System.err.println("[" + tag + "] could not instrument " + typeName + ": " + error);
    }

    @Override
    public void onTransformation(TypeDescription type, ClassLoader loader, JavaModule module, boolean loaded,
                                 DynamicType dynamicType) {
        System.err.println("[" + tag + "] " + verb + " " + type.getName());
    }
}
