package dev.ccagent.jfr;

import java.util.List;

/** The event types of this module and where the settings file lives. */
public final class CcEvents {

    /** Class-path resource of the settings file (also in the agent jar). */
    public static final String SETTINGS_RESOURCE = "/dev/ccagent/jfr/ccagent.jfc";

    /** Stable event names, as in JMC and {@code jfr print --events}. */
    public static final List<String> NAMES = EventNames.ALL;

    private CcEvents() {
    }

    /** Every event class, for registration and tests. */
    public static List<Class<? extends jdk.jfr.Event>> classes() {
        return List.of(CongestionState.class, PacingRateChange.class, PacingStall.class, AckOnlySendLoop.class,
                SendLoopSpin.class, SendPathAllocation.class, AlgorithmAssigned.class, AgentLifecycle.class, ConnectionSummary.class,
                CanaryRolledBack.class, CpuSpin.class, Fallback.class, StreamStall.class, ModuleVerdict.class);
    }

    /** The settings file's text (UTF-8), from the class path. */
    public static String settingsText() throws java.io.IOException {
        try (java.io.InputStream in = CcEvents.class.getResourceAsStream(SETTINGS_RESOURCE)) {
            if (in == null) {
                throw new java.io.FileNotFoundException(SETTINGS_RESOURCE + " not on the class path");
            }
            return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        }
    }
}
