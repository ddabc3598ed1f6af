package dev.ccagent.agent.config;

import dev.ccagent.agent.log.AgentLog;
import dev.ccagent.cc.CcOptions;

import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The agent's validated configuration. Built by {@link AgentArgs#parse}; immutable, so a running
 * agent swaps a whole new instance in when an operator reconfigures it.
 */
public final class AgentConfig {

    /** The pseudo-algorithm that leaves the library's own controller in place. */
    public static final String STOCK = "stock";
    /** {@code jfr.state-connections} when not given: periodic CongestionState events a period at most. */
    public static final int DEFAULT_STATE_CONNECTIONS = 256;
    /** The largest {@code jfr.state-connections} accepted. */
    public static final int MAX_STATE_CONNECTIONS = 1_000_000;

    /** One arm of the split: an algorithm with its options, and the share of connections it gets. */
    public static final class Arm {
        private final String label;
        private final String algorithm;
        private final CcOptions options;
        private final double percent;

        Arm(String label, String algorithm, CcOptions options, double percent) {
            this.label = label;
            this.algorithm = algorithm;
            this.options = options;
            this.percent = percent;
        }

        /** {@code default} or {@code canary}; recorded with every assignment. */
        public String label() {
            return label;
        }

        /** A registry name, or {@link #STOCK}. */
        public String algorithm() {
            return algorithm;
        }

        public boolean isStock() {
            return STOCK.equals(algorithm);
        }

        /** Validated options; null for stock. */
        public CcOptions options() {
            return options;
        }

        /** Share of new connections, percent. */
        public double percent() {
            return percent;
        }

        @Override
        public String toString() {
            return label + ":" + algorithm + (options != null && !options.given().isEmpty() ? options.given() : "")
                    + "@" + percent + "%";
        }
    }

    private final Arm defaultArm;
    private final List<Arm> canaryArms;
    private final AgentLog.Level logLevel;
    private final Path jfrFile;
    private final long jfrMaxSizeBytes;
    private final long jfrMaxAgeNanos;
    private final boolean fixKwikStreamStall;
    private boolean fixKwikLossTimer;
    private final Set<String> targets;
    private final Path profileOnSpinDir;
    private final Map<String, String> raw;
    private boolean detect = true;
    private long profileDurationNanos = 10_000_000_000L;
    private long profileEveryNanos = 600_000_000_000L;
    private NettyConfig netty = NettyConfig.DEFAULT;
    private long[] canarySaltKey;
    private CanaryConfig canary = CanaryConfig.DEFAULT;
    private int stateConnections = DEFAULT_STATE_CONNECTIONS;

    AgentConfig(Arm defaultArm, List<Arm> canaryArms, AgentLog.Level logLevel, Path jfrFile, long jfrMaxSizeBytes,
                long jfrMaxAgeNanos, boolean fixKwikStreamStall, Set<String> targets, Path profileOnSpinDir,
                Map<String, String> raw) {
        this.defaultArm = defaultArm;
        this.canaryArms = List.copyOf(canaryArms);
        this.logLevel = logLevel;
        this.jfrFile = jfrFile;
        this.jfrMaxSizeBytes = jfrMaxSizeBytes;
        this.jfrMaxAgeNanos = jfrMaxAgeNanos;
        this.fixKwikStreamStall = fixKwikStreamStall;
        this.targets = Set.copyOf(targets);
        this.profileOnSpinDir = profileOnSpinDir;
        this.raw = Collections.unmodifiableMap(raw);
    }

    /** Sets the {@code netty.*} part (only while building, before the config is published). */
    AgentConfig withNetty(NettyConfig nettyConfig) {
        this.netty = nettyConfig;
        return this;
    }

    /** Sets the canary salt's key (while building, before the configuration is published). */
    AgentConfig withCanarySaltKey(long[] key) {
        this.canarySaltKey = key;
        return this;
    }

    /** The SipHash key derived from {@code canary.salt}, or null (unsalted arm assignment). */
    public long[] canarySaltKey() {
        return canarySaltKey;
    }

    /** Sets the measurement and guard part (only while building, before the config is published). */
    AgentConfig withCanary(CanaryConfig canaryConfig) {
        this.canary = canaryConfig;
        return this;
    }

    /** {@code measure}, {@code summary.period} and the {@code guard.*} keys (see docs/canary.md). */
    public CanaryConfig canary() {
        return canary;
    }

    /** The {@code netty.*} keys: quiche's algorithms for Netty QUIC, pacing, path stats. */
    public NettyConfig netty() {
        return netty;
    }

    /** The arm for connections no canary claims. */
    public Arm defaultArm() {
        return defaultArm;
    }

    /** Canary arms in the order given; their percentages sum to at most 100. */
    public List<Arm> canaryArms() {
        return canaryArms;
    }

    /** Whether any arm injects one of our algorithms (otherwise nothing needs instrumenting). */
    public boolean injectsAnything() {
        return !defaultArm.isStock() || canaryArms.stream().anyMatch(a -> !a.isStock());
    }

    public AgentLog.Level logLevel() {
        return logLevel;
    }

    /** Where the agent's own JFR recording goes, or null. */
    public Path jfrFile() {
        return jfrFile;
    }

    public long jfrMaxSizeBytes() {
        return jfrMaxSizeBytes;
    }

    public long jfrMaxAgeNanos() {
        return jfrMaxAgeNanos;
    }

    /** {@code fix.kwik-stream-stall}: on unless {@code =off} was given (see docs/kwik.md). */
    public boolean fixKwikStreamStall() {
        return fixKwikStreamStall;
    }

    /** Whether {@code fix.kwik-stream-stall} is on because the operator left it at its default. */
    public boolean fixKwikStreamStallByDefault() {
        return fixKwikStreamStall && !raw.containsKey("fix.kwik-stream-stall");
    }

    /** Sets {@code jfr.state-connections} (while building, before the configuration is published). */
    AgentConfig withStateConnections(int connections) {
        this.stateConnections = connections;
        return this;
    }

    /**
     * {@code jfr.state-connections}: periodic CongestionState events a period at most; beyond as many active
     * connections the poller writes a rotating sample of them.
     */
    public int stateConnections() {
        return stateConnections;
    }

    /** Sets {@code fix.kwik-loss-timer} (while building, before the configuration is published). */
    AgentConfig withFixKwikLossTimer(boolean on) {
        this.fixKwikLossTimer = on;
        return this;
    }

    /** {@code fix.kwik-loss-timer=on}: kwik's loss-detection-timer update made atomic (see docs/kwik.md). */
    public boolean fixKwikLossTimer() {
        return fixKwikLossTimer;
    }

    /** Which target libraries to instrument ({@code kwik}, {@code netty}). */
    public boolean targets(String library) {
        return targets.contains(library);
    }

    public Path profileOnSpinDir() {
        return profileOnSpinDir;
    }

    /** Sets the detection settings (while building, before the configuration is published). */
    AgentConfig withDetection(boolean detect, long profileDurationNanos, long profileEveryNanos) {
        this.detect = detect;
        this.profileDurationNanos = profileDurationNanos;
        this.profileEveryNanos = profileEveryNanos;
        return this;
    }

    /** Whether send-loop counters and the spin detector run (also for stock connections). */
    public boolean detect() {
        return detect;
    }

    /** Length of one async-profiler capture. */
    public long profileDurationNanos() {
        return profileDurationNanos;
    }

    /** Minimum interval between two captures. */
    public long profileEveryNanos() {
        return profileEveryNanos;
    }

    /** The configuration as given, after merging a config file (for logs, events and status). */
    public Map<String, String> raw() {
        return raw;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("default=").append(defaultArm.algorithm());
        if (defaultArm.options() != null && !defaultArm.options().given().isEmpty()) {
            sb.append(defaultArm.options().given());
        }
        for (Arm a : canaryArms) {
            sb.append(", canary=").append(a.algorithm()).append(':').append(a.percent()).append('%');
        }
        return sb.toString();
    }
}
