package dev.ccagent.agent.runtime;

/** The agent's version and the system property that marks a JVM it runs in (read by {@code ccagent list}). */
public final class AgentVersion {

    /** System property set in a JVM where the agent runs. */
    public static final String ATTACHED_PROPERTY = "ccagent.version";

    /** The jar's {@code Implementation-Version}, or {@code dev} outside a built jar. */
    public static final String VERSION = versionOf();

    private AgentVersion() {
    }

    private static String versionOf() {
        String v = AgentVersion.class.getPackage().getImplementationVersion();
        return v != null ? v : "dev";
    }
}
