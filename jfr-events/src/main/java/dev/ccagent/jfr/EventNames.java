package dev.ccagent.jfr;

import java.util.List;

/**
 * The stable names of ccagent's JFR event types, one table for the writers, the report and the tests
 * (as JMC's {@code JdkTypeIDs} names the JDK's). A name here is a contract with every recording ever
 * written: renaming one breaks old recordings' reports. {@code CcEventsTest} checks that this table
 * and the event classes' {@code @Name}s agree.
 */
public final class EventNames {

    private static final String PREFIX = "dev.ccagent.";

    /** {@link AckOnlySendLoop}. */
    public static final String ACK_ONLY_SEND_LOOP = PREFIX + "AckOnlySendLoop";
    /** {@link AgentLifecycle}. */
    public static final String AGENT_LIFECYCLE = PREFIX + "AgentLifecycle";
    /** {@link AlgorithmAssigned}. */
    public static final String ALGORITHM_ASSIGNED = PREFIX + "AlgorithmAssigned";
    /** {@link CanaryRolledBack}. */
    public static final String CANARY_ROLLED_BACK = PREFIX + "CanaryRolledBack";
    /** {@link CongestionState}. */
    public static final String CONGESTION_STATE = PREFIX + "CongestionState";
    /** {@link ConnectionSummary}. */
    public static final String CONNECTION_SUMMARY = PREFIX + "ConnectionSummary";
    /** {@link CpuSpin}. */
    public static final String CPU_SPIN = PREFIX + "CpuSpin";
    /** {@link Fallback}. */
    public static final String FALLBACK = PREFIX + "Fallback";
    /** {@link ModuleVerdict}. */
    public static final String MODULE_VERDICT = PREFIX + "ModuleVerdict";
    /** {@link PacingRateChange}. */
    public static final String PACING_RATE_CHANGE = PREFIX + "PacingRateChange";
    /** {@link PacingStall}. */
    public static final String PACING_STALL = PREFIX + "PacingStall";
    /** {@link SendLoopSpin}. */
    public static final String SEND_LOOP_SPIN = PREFIX + "SendLoopSpin";
    /** {@link StreamStall}. */
    public static final String STREAM_STALL = PREFIX + "StreamStall";
    /** {@link SendPathAllocation}. */
    public static final String SEND_PATH_ALLOCATION = PREFIX + "SendPathAllocation";

    /** Every event type, in the order {@link CcEvents#classes()} lists them. */
    public static final List<String> ALL = List.of(CONGESTION_STATE, PACING_RATE_CHANGE, PACING_STALL, ACK_ONLY_SEND_LOOP, SEND_LOOP_SPIN, SEND_PATH_ALLOCATION, ALGORITHM_ASSIGNED, AGENT_LIFECYCLE, CONNECTION_SUMMARY, CANARY_ROLLED_BACK, CPU_SPIN, FALLBACK, STREAM_STALL, MODULE_VERDICT);

    private EventNames() {
    }
}
