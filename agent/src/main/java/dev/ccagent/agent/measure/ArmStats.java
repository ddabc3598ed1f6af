package dev.ccagent.agent.measure;

import dev.ccagent.agent.log.AgentLog;

import javax.management.MBeanServer;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The live aggregates of one arm (library, arm label, algorithm). Updated from every connection's
 * {@link ConnectionMeter}: one {@link LongAdder} add or one atomic increment per packet or ACK, no
 * allocation. Instances are created once per arm and registered as an {@link ArmMXBean}.
 */
public final class ArmStats implements ArmMXBean {

    public static final String DOMAIN = "dev.ccagent";

    private static final Map<String, ArmStats> ARMS = new ConcurrentHashMap<>();

    private final String library;
    private final String arm;
    private final String algorithm;
    final LongAdder connections = new LongAdder();
    final LongAdder open = new LongAdder();
    final LongAdder closed = new LongAdder();
    final LongAdder leftSlowStart = new LongAdder();
    final LongAdder bytesSent = new LongAdder();
    final LongAdder bytesAcked = new LongAdder();
    final LongAdder bytesLost = new LongAdder();
    final LongAdder packetsSent = new LongAdder();
    final LongAdder packetsLost = new LongAdder();
    final LongAdder fallbacks = new LongAdder();
    final LongAdder alarms = new LongAdder();
    final WindowedRtt rtt = new WindowedRtt();
    /** Closed connections for the guard (a fixed ring, O(1) per close). */
    final Guard.Window guardWindow = new Guard.Window();
    /** CPU spin episodes for the guard (one per connection). */
    final Guard.Spins spins = new Guard.Spins();
    /** The guard's sequential state for this (canary) arm; guard thread only, under Guard's lock. */
    Guard.Judge judge;
    /** The first record of the current experiment (set at re-enable); under Guard's lock. */
    long guardFrom;
    long spinFrom;
    private volatile String rollbackEvidence = "";
    /** Written by the guard's thread after each evaluation with new evidence. */
    volatile String guardState = "";

    private ArmStats(String library, String arm, String algorithm) {
        this.library = library;
        this.arm = arm;
        this.algorithm = algorithm;
    }

    /** The arm's aggregates, created (and registered as an MXBean) on first use. */
    public static ArmStats of(String library, String arm, String algorithm) {
        String key = library + " " + arm + ":" + algorithm;
        ArmStats s = ARMS.get(key);
        if (s != null) {
            return s;
        }
        return ARMS.computeIfAbsent(key, k -> {
            ArmStats created = new ArmStats(library, arm, algorithm);
            created.register();
            return created;
        });
    }

    /** The arm's aggregates if it exists (never creates one). */
    public static ArmStats find(String library, String arm, String algorithm) {
        return ARMS.get(library + " " + arm + ":" + algorithm);
    }

    /** Every arm seen so far, by "library arm:algorithm". */
    public static Map<String, ArmStats> all() {
        return new TreeMap<>(ARMS);
    }

    static ObjectName objectName(String library, String arm, String algorithm) throws Exception {
        return new ObjectName(DOMAIN + ":type=Arm,library=" + value(library) + ",arm=" + value(arm) + ",algorithm="
                + value(algorithm));
    }

    /** Plain when the value allows it (algorithm names do), so exporters see kwik, not "kwik". */
    private static String value(String v) {
        return v.matches("[A-Za-z0-9._-]+") ? v : ObjectName.quote(v);
    }

    private void register() {
        try {
            MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            ObjectName name = objectName(library, arm, algorithm);
            if (!server.isRegistered(name)) {
                server.registerMBean(this, name);
            }
        } catch (Exception | LinkageError e) {
            AgentLog.warnOnce("arm-mbean", "per-arm management bean not registered: " + e, null);
        }
    }

    // ---------------------------------------------------------------- updates (hot: no allocation)

    void sent(long bytes) {
        bytesSent.add(bytes);
        packetsSent.increment();
    }

    void acked(long bytes) {
        bytesAcked.add(bytes);
    }

    void lost(long bytes) {
        bytesLost.add(bytes);
        packetsLost.increment();
    }

    void rttSample(long nanos) {
        rtt.record(nanos);
    }

    /** A connection of this arm fell back to the stock controller. */
    public void fallback() {
        fallbacks.increment();
    }

    /**
     * A send-loop or ACK-only alarm on a connection of this arm: counted ({@code Alarms}) and logged by
     * the detector, never judged: a client alone can cause these patterns (withholding ACKs, PINGs).
     */
    public void alarm(String what) {
        alarms.increment();
    }

    /**
     * A CPU spin episode (server CPU burned without progress) on a connection of this arm: counted, and
     * evidence for the guard ({@code guard.spin=on}), at most once per connection.
     */
    public void cpuSpin(String connectionId, long at) {
        alarms.increment();
        Guard.onCpuSpin(this, connectionId, at);
    }

    boolean isBaseline() {
        return "default".equals(arm);
    }

    void rollBack(String evidence) {
        rollbackEvidence = evidence;
    }

    void reEnable() {
        rollbackEvidence = "";
    }

    // ---------------------------------------------------------------- MXBean

    @Override public String getLibrary() { return library; }
    @Override public String getArm() { return arm; }
    @Override public String getAlgorithm() { return algorithm; }
    @Override public long getConnections() { return connections.sum(); }
    @Override public long getOpenConnections() { return open.sum(); }
    @Override public long getClosedConnections() { return closed.sum(); }
    @Override public long getLeftSlowStartConnections() { return leftSlowStart.sum(); }
    @Override public long getBytesSent() { return bytesSent.sum(); }
    @Override public long getBytesAcked() { return bytesAcked.sum(); }
    @Override public long getBytesLost() { return bytesLost.sum(); }
    @Override public long getPacketsSent() { return packetsSent.sum(); }
    @Override public long getPacketsLost() { return packetsLost.sum(); }

    @Override
    public double getLossRate() {
        long sent = bytesSent.sum();
        return sent > 0 ? (double) bytesLost.sum() / sent : 0;
    }

    @Override public double getRttP50Millis() { return rtt.percentile(0.50) / 1e6; }
    @Override public double getRttP95Millis() { return rtt.percentile(0.95) / 1e6; }
    @Override public long getRttSamples() { return rtt.samples(); }
    @Override public long getFallbacks() { return fallbacks.sum(); }
    @Override public long getAlarms() { return alarms.sum(); }
    @Override public boolean isRolledBack() { return !rollbackEvidence.isEmpty(); }
    @Override public String getRollbackEvidence() { return rollbackEvidence; }
    @Override public String getGuardState() { return guardState; }

    /** One line for {@code status}. */
    public String describe() {
        return String.format(java.util.Locale.ROOT,
                "%s %s:%s connections %d (open %d), acked %d B, lost %d B (%.2f%%), RTT p50 %.1f ms p95 %.1f ms, "
                        + "fallbacks %d, alarms %d%s",
                library, arm, algorithm, getConnections(), getOpenConnections(), getBytesAcked(), getBytesLost(),
                100 * getLossRate(), getRttP50Millis(), getRttP95Millis(), getFallbacks(), getAlarms(),
                isRolledBack() ? ", ROLLED BACK: " + rollbackEvidence : guardState.isEmpty() ? "" : ", guard: " + guardState);
    }
}
