package dev.ccagent.jfr;

/**
 * The field names of ccagent's JFR events, for readers ({@code RecordedEvent.getLong(EventFields.MIN_RTT)})
 * and tests (as JMC's {@code JdkAttributes} names the JDK's event fields). Each is a field of the event
 * classes named after it; fields of the same meaning share a name across events ({@code library},
 * {@code connectionId}, {@code algorithm}, ...). {@code CcEventsTest} checks that every event field has a
 * constant here and every constant names a field.
 */
public final class EventFields {

    /** In {@link AckOnlySendLoop}. */
    public static final String ACK_ELICITING_BYTES = "ackElicitingBytes";
    /** In {@link AckOnlySendLoop}. */
    public static final String ACK_ELICITING_PACKETS = "ackElicitingPackets";
    /** In {@link CpuSpin}. */
    public static final String ACK_ELICITING_SENT = "ackElicitingSent";
    /** In {@link AckOnlySendLoop}. */
    public static final String ACK_ONLY_PACKETS = "ackOnlyPackets";
    /** In {@link AckOnlySendLoop}. */
    public static final String ACK_ONLY_RATE = "ackOnlyRate";
    /** In {@link AgentLifecycle}. */
    public static final String ACTION = "action";
    /** In {@link ConnectionSummary}. */
    public static final String AGENT_INSTANCE = "agentInstance";
    /** In {@link AgentLifecycle}. */
    public static final String AGENT_VERSION = "agentVersion";
    /** In {@link AckOnlySendLoop}, {@link AlgorithmAssigned}, {@link CongestionState}, {@link ConnectionSummary}, {@link PacingRateChange}, {@link PacingStall}, {@link SendLoopSpin}. */
    public static final String ALGORITHM = "algorithm";
    /** In {@link SendPathAllocation}. */
    public static final String ALLOCATED = "allocated";
    /** In {@link SendPathAllocation}. */
    public static final String ALLOCATION_RATE = "allocationRate";
    /** In {@link CanaryRolledBack}. */
    public static final String ALPHA = "alpha";
    /** In {@link CpuSpin}. */
    public static final String APP_BYTES = "appBytes";
    /** In {@link ConnectionSummary}. */
    public static final String APP_LIMITED_TIME = "appLimitedTime";
    /** In {@link CongestionState}. */
    public static final String BANDWIDTH_ESTIMATE = "bandwidthEstimate";
    /** In {@link CanaryRolledBack}. */
    public static final String BASELINE_ALGORITHM = "baselineAlgorithm";
    /** In {@link CanaryRolledBack}. */
    public static final String BASELINE_CONNECTIONS = "baselineConnections";
    /** In {@link CanaryRolledBack}. */
    public static final String BASELINE_VALUE = "baselineValue";
    /** In {@link CongestionState}, {@link ConnectionSummary}, {@link CpuSpin}. */
    public static final String BYTES_ACKED = "bytesAcked";
    /** In {@link CongestionState}. */
    public static final String BYTES_IN_FLIGHT = "bytesInFlight";
    /** In {@link ConnectionSummary}. */
    public static final String BYTES_LOST = "bytesLost";
    /** In {@link SendPathAllocation}. */
    public static final String BYTES_PER_PACKET = "bytesPerPacket";
    /** In {@link ConnectionSummary}. */
    public static final String BYTES_SENT = "bytesSent";
    /** In {@link StreamStall}. */
    public static final String BYTES_WAITING = "bytesWaiting";
    /** In {@link CanaryRolledBack}. */
    public static final String CANARY_ALGORITHM = "canaryAlgorithm";
    /** In {@link AlgorithmAssigned}, {@link CanaryRolledBack}, {@link CongestionState}, {@link ConnectionSummary}. */
    public static final String CANARY_ARM = "canaryArm";
    /** In {@link CanaryRolledBack}. */
    public static final String CANARY_CONNECTIONS = "canaryConnections";
    /** In {@link CanaryRolledBack}. */
    public static final String CANARY_VALUE = "canaryValue";
    /** In {@link ModuleVerdict}. */
    public static final String CLASS_LOADER = "classLoader";
    /** In {@link CongestionState}. */
    public static final String CONGESTION_EVENTS = "congestionEvents";
    /** In {@link CongestionState}. */
    public static final String CONGESTION_WINDOW = "congestionWindow";
    /** In {@link AckOnlySendLoop}, {@link AlgorithmAssigned}, {@link CongestionState}, {@link ConnectionSummary}, {@link CpuSpin}, {@link PacingRateChange}, {@link PacingStall}, {@link SendLoopSpin}, {@link SendPathAllocation}, {@link StreamStall}. */
    public static final String CONNECTION_ID = "connectionId";
    /** In {@link Fallback}. */
    public static final String CONSEQUENCE = "consequence";
    /** In {@link ConnectionSummary}. */
    public static final String CONTROLLER = "controller";
    /** In {@link Fallback}. */
    public static final String COUNT = "count";
    /** In {@link CpuSpin}. */
    public static final String CPU_SHARE = "cpuShare";
    /** In {@link CpuSpin}. */
    public static final String CPU_TIME = "cpuTime";
    /** In {@link CongestionState}. */
    public static final String CWND_GAIN = "cwndGain";
    /** In {@link CpuSpin}. */
    public static final String DATAGRAMS = "datagrams";
    /** In {@link AgentLifecycle}. */
    public static final String DETAIL = "detail";
    /** In {@link CpuSpin}, {@link StreamStall}. */
    public static final String DETECTED_AFTER = "detectedAfter";
    /** In {@link SendLoopSpin}. */
    public static final String EMPTY_WAKEUPS = "emptyWakeups";
    /** In {@link SendLoopSpin}. */
    public static final String EMPTY_WAKEUP_RATE = "emptyWakeupRate";
    /** In {@link CpuSpin}, {@link StreamStall}. */
    public static final String ENDED_BY = "endedBy";
    /** In {@link CpuSpin}, {@link StreamStall}. */
    public static final String EPISODE_DURATION = "episodeDuration";
    /** In {@link CpuSpin}, {@link StreamStall}. */
    public static final String EPISODE_ID = "episodeId";
    /** In {@link CanaryRolledBack}. */
    public static final String EVIDENCE = "evidence";
    /** In {@link Fallback}. */
    public static final String EXCEPTION = "exception";
    /** In {@link PacingStall}. */
    public static final String EXPECTED_WAIT = "expectedWait";
    /** In {@link CanaryRolledBack}. */
    public static final String E_VALUE = "eValue";
    /** In {@link StreamStall}. */
    public static final String FIX_ON = "fixOn";
    /** In {@link SendPathAllocation}. */
    public static final String FLAGGED = "flagged";
    /** In {@link CpuSpin}. */
    public static final String FLAME_GRAPH = "flameGraph";
    /** In {@link Fallback}, {@link ModuleVerdict}. */
    public static final String KIND = "kind";
    /** In {@link ConnectionSummary}. */
    public static final String LEFT_SLOW_START = "leftSlowStart";
    /** In {@link AckOnlySendLoop}, {@link AgentLifecycle}, {@link AlgorithmAssigned}, {@link CanaryRolledBack}, {@link CongestionState}, {@link ConnectionSummary}, {@link CpuSpin}, {@link ModuleVerdict}, {@link PacingRateChange}, {@link PacingStall}, {@link SendLoopSpin}, {@link SendPathAllocation}, {@link StreamStall}. */
    public static final String LIBRARY = "library";
    /** In {@link AgentLifecycle}, {@link ModuleVerdict}. */
    public static final String LIBRARY_VERSION = "libraryVersion";
    /** In {@link ConnectionSummary}. */
    public static final String LIFETIME = "lifetime";
    /** In {@link CpuSpin}. */
    public static final String LOOP_CONNECTIONS = "loopConnections";
    /** In {@link CpuSpin}, {@link SendPathAllocation}. */
    public static final String LOOP_CONNECTION_COUNT = "loopConnectionCount";
    /** In {@link CpuSpin}. */
    public static final String LOOP_SPIN = "loopSpin";
    /** In {@link CpuSpin}. */
    public static final String LOOP_TASK_DELAY = "loopTaskDelay";
    /** In {@link CanaryRolledBack}. */
    public static final String METRIC = "metric";
    /** In {@link CongestionState}, {@link ConnectionSummary}. */
    public static final String MIN_RTT = "minRtt";
    /** In {@link CongestionState}. */
    public static final String MODE = "mode";
    /** In {@link ModuleVerdict}. */
    public static final String MODULE = "module";
    /** In {@link AlgorithmAssigned}. */
    public static final String OPTIONS = "options";
    /** In {@link CongestionState}. */
    public static final String PACING_GAIN = "pacingGain";
    /** In {@link CongestionState}. */
    public static final String PACING_QUANTUM = "pacingQuantum";
    /** In {@link CongestionState}, {@link PacingStall}. */
    public static final String PACING_RATE = "pacingRate";
    /** In {@link SendPathAllocation}. */
    public static final String PACKETS = "packets";
    /** In {@link CongestionState}, {@link ConnectionSummary}. */
    public static final String PACKETS_LOST = "packetsLost";
    /** In {@link AckOnlySendLoop}, {@link SendLoopSpin}. */
    public static final String PACKETS_RECEIVED = "packetsReceived";
    /** In {@link ConnectionSummary}. */
    public static final String PACKETS_SENT = "packetsSent";
    /** In {@link SendLoopSpin}. */
    public static final String PAST_SEND_TIMES = "pastSendTimes";
    /** In {@link SendPathAllocation}. */
    public static final String PATH = "path";
    /** In {@link PacingRateChange}. */
    public static final String PREVIOUS_QUANTUM = "previousQuantum";
    /** In {@link PacingRateChange}. */
    public static final String PREVIOUS_RATE = "previousRate";
    /** In {@link CongestionState}. */
    public static final String PROBE_BW_PHASE = "probeBwPhase";
    /** In {@link StreamStall}. */
    public static final String PTO = "pto";
    /** In {@link PacingRateChange}. */
    public static final String QUANTUM = "quantum";
    /** In {@link PacingRateChange}. */
    public static final String RATE = "rate";
    /** In {@link PacingRateChange}. */
    public static final String RATE_CHANGE = "rateChange";
    /** In {@link AlgorithmAssigned}, {@link ModuleVerdict}. */
    public static final String REASON = "reason";
    /** In {@link AckOnlySendLoop}. */
    public static final String REFUSALS = "refusals";
    /** In {@link StreamStall}. */
    public static final String RETRANSMIT_PENDING = "retransmitPending";
    /** In {@link AlgorithmAssigned}, {@link ConnectionSummary}. */
    public static final String ROLE = "role";
    /** In {@link ConnectionSummary}. */
    public static final String RTT_P50 = "rttP50";
    /** In {@link ConnectionSummary}. */
    public static final String RTT_P95 = "rttP95";
    /** In {@link ConnectionSummary}. */
    public static final String RTT_SAMPLES = "rttSamples";
    /** In {@link ConnectionSummary}. */
    public static final String SEQUENCE = "sequence";
    /** In {@link CongestionState}. */
    public static final String SLOW_START_THRESHOLD = "slowStartThreshold";
    /** In {@link CongestionState}, {@link ConnectionSummary}. */
    public static final String SMOOTHED_RTT = "smoothedRtt";
    /** In {@link StreamStall}. */
    public static final String STREAM_ID = "streamId";
    /** In {@link StreamStall}. */
    public static final String STREAM_OFFSET = "streamOffset";
    /** In {@link CpuSpin}. */
    public static final String THREAD_ID = "threadId";
    /** In {@link CpuSpin}, {@link SendPathAllocation}. */
    public static final String THREAD_NAME = "threadName";
    /** In {@link CanaryRolledBack}, {@link SendPathAllocation}. */
    public static final String THRESHOLD = "threshold";
    /** In {@link CpuSpin}. */
    public static final String TOP_FRAMES = "topFrames";
    /** In {@link Fallback}. */
    public static final String TOTAL = "total";
    /** In {@link ConnectionSummary}. */
    public static final String TRANSFER_TIME = "transferTime";
    /** In {@link CanaryRolledBack}. */
    public static final String TRIALS = "trials";
    /** In {@link CongestionState}, {@link ConnectionSummary}. */
    public static final String TRIGGER = "trigger";
    /** In {@link ModuleVerdict}. */
    public static final String VERDICT = "verdict";
    /** In {@link ModuleVerdict}. */
    public static final String VERDICT_TIME = "verdictTime";
    /** In {@link PacingStall}. */
    public static final String WAIT_TIME = "waitTime";
    /** In {@link SendLoopSpin}. */
    public static final String WAKEUPS = "wakeups";
    /** In {@link CongestionState}, {@link SendPathAllocation}. */
    public static final String WEIGHT = "weight";
    /** In {@link Fallback}. */
    public static final String WHERE = "where";
    /** In {@link AckOnlySendLoop}, {@link CanaryRolledBack}, {@link SendLoopSpin}, {@link SendPathAllocation}. */
    public static final String WINDOW = "window";
    /** In {@link CanaryRolledBack}. */
    public static final String WORSE_TRIALS = "worseTrials";
    /** In {@link StreamStall}. */
    public static final String WRITER_BLOCKED = "writerBlocked";

    private EventFields() {
    }
}
