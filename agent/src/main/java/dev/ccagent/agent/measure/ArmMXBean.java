package dev.ccagent.agent.measure;

/**
 * One canary arm's live aggregates, registered as
 * {@code dev.ccagent:type=Arm,library=LIB,arm=LABEL,algorithm=ALGO} (one per library, arm label and
 * algorithm that has had a connection). Every attribute is a simple open type (long, double, boolean,
 * String), so the Prometheus JMX exporter and JConsole read them without custom types. Counters are
 * cumulative since the agent started; RTT percentiles cover the recent window ({@code guard.window}, between half
 * of it and all of it).
 */
public interface ArmMXBean {

    String getLibrary();

    /** {@code default} or {@code canary}. */
    String getArm();

    /** The arm's algorithm, {@code stock} for the library's own controller. */
    String getAlgorithm();

    /** Connections assigned to the arm. */
    long getConnections();

    /** Connections measured and not yet closed. */
    long getOpenConnections();

    /** Connections that closed (their final ConnectionSummary is written). */
    long getClosedConnections();

    /** Closed connections that left slow start / STARTUP. */
    long getLeftSlowStartConnections();

    long getBytesSent();

    long getBytesAcked();

    long getBytesLost();

    long getPacketsSent();

    long getPacketsLost();

    /** Bytes lost / bytes sent since start, 0 before anything was sent. */
    double getLossRate();

    /** Median RTT sample over the recent window, ms (0 without samples). */
    double getRttP50Millis();

    /** 95th percentile RTT sample over the recent window, ms (0 without samples). */
    double getRttP95Millis();

    /** RTT samples in the recent window. */
    long getRttSamples();

    /** Connections of the arm that fell back to the stock controller because our code failed. */
    long getFallbacks();

    /**
     * Alarms raised on the arm's connections: send-loop and ACK-only patterns (information: a client can
     * cause them) and CPU spin episodes (the guard's evidence).
     */
    long getAlarms();

    /** Whether the guardrail stopped assigning new connections to this arm. */
    boolean isRolledBack();

    /** The guard's one-line evidence for the rollback, "" when not rolled back. */
    String getRollbackEvidence();

    /**
     * The guard's test of this canary arm as of its last evaluation (empty for the default arm or with
     * the guard off): pairs, and per metric worse pairs / trials and the e-value against its threshold.
     */
    String getGuardState();
}
