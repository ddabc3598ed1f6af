package dev.ccagent.report;

import dev.ccagent.report.stats.Bootstrap;
import dev.ccagent.report.stats.Comparison;

import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The canary report over many recordings (a fleet): reads every file event by event
 * ({@link RecordingFile#readEvent()}, never a whole recording in memory), keeps one small record per
 * connection, and compares every canary arm with the baseline arm per metric.
 *
 * <p>Primary source: {@code dev.ccagent.ConnectionSummary}, cumulative per connection, so the summary
 * with the highest {@code sequence} per (agentInstance, connectionId) is the connection's whole life; a
 * summary seen again with the same sequence (the same events in two files) is counted once. Connections
 * without any summary (recordings of older agents) are measured from their {@code CongestionState}
 * samples. The same file given twice, or two files with identical content, are read once.
 *
 * <p>The parts: {@link RecordingFiles} (which files, duplicates), {@link JfrEvents} (the one JFR reader),
 * {@link EventDecoder} (events into the {@link ConnectionModel}), {@link ArmAggregator} (the arms),
 * {@link BaselineChoice}; here the comparisons and the result the outputs render.
 */
public final class FleetReport {

    /** Metrics compared, in report order. */
    public static final List<String> METRICS = List.of("goodput", "goodput-left-slow-start", "rtt-p50", "rtt-p95",
            "loss-rate");
    /** A pacing stall longer than this many times the connection's median RTT is counted as long. */
    public static final double STALL_RTT_FACTOR = 1.0;
    /** Options of a report. */
    public static final class Options {
        public long seed = 1;
        /** Baseline arm: an arm name ("default stock") or label ("default"); null picks the "default" arm. */
        public String baseline;
        public int resamples = Bootstrap.DEFAULT_RESAMPLES;
    }

    /** One input file and what became of it. */
    public static final class Input {
        public final Path path;
        public long events;
        public long ccagentEvents;
        public long summaries;
        /** Set when this file was not read because it is the same recording as another. */
        public Path duplicateOf;
        /** Set when the file could not be read, or only in part, or holds no ccagent events. */
        public String problem;
        /**
         * The earliest and the latest end of its ccagent events (when JFR wrote each, so an episode that began
         * before the recording does not stretch it; the JDK's events are left out, their times can lie outside
         * the file's chunks); null before one.
         */
        public Instant first;
        public Instant last;
        /** ConnectionSummary fields this recording's event type lacks (an agent of another version). */
        public final Set<String> missingFields = new java.util.TreeSet<>();

        Input(Path path) {
            this.path = path;
        }

        public String status() {
            return duplicateOf != null ? "duplicate" : problem != null ? "problem" : "read";
        }
    }

    /** The figures of one arm. */
    public static final class Arm {
        public final String name;
        public final String label;
        public final String algorithm;
        public int connections;
        public int fromSummaries;
        public int fromStates;
        public final Map<String, Integer> controllers = new TreeMap<>();
        public double bytesSent;
        public double bytesAcked;
        public double bytesLost;
        /** Ascending per-connection values (NaN left out). */
        public double[] goodput = new double[0];
        public double[] goodputLeftSlowStart = new double[0];
        public double[] rttP50Millis = new double[0];
        public double[] rttP95Millis = new double[0];
        public double[] lossRate = new double[0];
        public double[] appLimitedShare = new double[0];
        public final Map<String, Double> secondsInMode = new TreeMap<>();
        /** Connections with two periodic CongestionState samples or more: those {@link #secondsInMode} covers. */
        public int modeTimedConnections;
        public final Map<String, Integer> alarms = new TreeMap<>();
        public int pacingStalls;
        public int connectionsWithStalls;
        public long stallsLongerThanRtt;
        public int connectionsWithLongStalls;
        /** Time series: congestion window (bytes), smoothed RTT (ns), pacing rate (bytes/s). */
        final TimeSeries cwnd = new TimeSeries();
        final TimeSeries srtt = new TimeSeries();
        final TimeSeries pacing = new TimeSeries();

        Arm(String name, String label, String algorithm) {
            this.name = name;
            this.label = label;
            this.algorithm = algorithm;
        }

        public double[] metric(String metric) {
            switch (metric) {
                case "goodput":
                    return goodput;
                case "goodput-left-slow-start":
                    return goodputLeftSlowStart;
                case "rtt-p50":
                    return rttP50Millis;
                case "rtt-p95":
                    return rttP95Millis;
                case "loss-rate":
                    return lossRate;
                default:
                    throw new IllegalArgumentException(metric);
            }
        }

        /** Aggregate loss rate: bytes lost over bytes sent, all connections with both counted. */
        public double aggregateLossRate() {
            return bytesSent > 0 ? bytesLost / bytesSent : Double.NaN;
        }
    }

    /** A canary arm against the baseline, one per metric. */
    public static final class ArmComparison {
        public final Arm arm;
        public final Arm baseline;
        public final List<Comparison> metrics = new ArrayList<>();

        ArmComparison(Arm arm, Arm baseline) {
            this.arm = arm;
            this.baseline = baseline;
        }
    }

    /** A rollback the guard wrote. */
    public record Rollback(Instant time, String arm, String metric, String evidence) {
    }

    /**
     * A spin of a shared event loop itself (no connection blamed), by its latest CpuSpin event: since when, the
     * loop's thread, how it spun ({@code blocked} or {@code polling}), for how long at what share of a core,
     * how late the tasks of the QUIC connections on it ran, those connections (their ids as listed, and their
     * number), the innermost frame, and how it ended ({@code ongoing} when last recorded).
     */
    public record LoopSpin(Instant since, String library, String thread, String kind, double seconds, double cpuShare,
                           long taskDelayNanos, int connections, String connectionIds, String topFrame, String endedBy) {
    }

    /** The first and the last time of the events counted into one row. */
    public abstract static class Span {
        public Instant first;
        public Instant last;

        /** Widens the span to {@code t}; true when {@code t} is the latest so far (or equal to it). */
        boolean saw(Instant t) {
            if (first == null || t.isBefore(first)) {
                first = t;
            }
            if (last == null || !t.isBefore(last)) {
                last = t;
                return true;
            }
            return false;
        }
    }

    /** One cause of fallbacks (the agent's code failed, the connection went on without it), from its Fallback events. */
    public static final class FallbackCause extends Span {
        public final String where;
        public final String exception;
        /** What the connections did instead, as the cause's latest event says. */
        public String consequence;
        /** Fallbacks of the cause: the events' counts added up. */
        public long count;

        FallbackCause(String where, String exception) {
            this.where = where;
            this.exception = exception;
        }
    }

    /**
     * A target module's verdict for a class loader, from its ModuleVerdict events: applied, or skipped and why.
     * The agent writes a verdict when it is made and again at every chunk start; the report keeps each once.
     */
    public record ModuleVerdict(String library, String module, String version, String classLoader, boolean applied,
                                String reason, Instant time) {
    }

    /** One module (and version) in the recordings: the loaders it applied to, and its skips grouped by reason. */
    public static final class ModuleVerdicts {
        public final String module;
        public final String version;
        /** Class-loader verdicts that applied (a loader decided again after a new attach counts again). */
        public int appliedLoaders;
        /** Skipped class loaders per reason, in order of the reason. */
        public final Map<String, List<String>> skippedLoaders = new TreeMap<>();

        ModuleVerdicts(String module, String version) {
            this.module = module;
            this.version = version;
        }

        /** The skipped loaders, all reasons. */
        public int skipped() {
            return skippedLoaders.values().stream().mapToInt(List::size).sum();
        }
    }

    final Options options;
    final List<Input> inputs;
    final ConnectionModel model = new ConnectionModel();
    final Map<String, Arm> arms;
    final Arm baselineArm;
    final String baselineProblem;
    final List<ArmComparison> comparisons = new ArrayList<>();
    final int tests;

    private FleetReport(Options options, List<Input> inputs) {
        this.options = options;
        this.inputs = inputs;
        EventDecoder decoder = new EventDecoder(model);
        for (Input in : inputs) {
            if (in.duplicateOf == null && in.problem == null) {
                readFile(in, decoder);
            }
        }
        arms = ArmAggregator.arms(model);
        BaselineChoice baseline = BaselineChoice.of(arms, options.baseline);
        baselineArm = baseline.arm;
        baselineProblem = baseline.problem;
        List<Arm> canaries = new ArrayList<>();
        if (baselineArm != null) {
            for (Arm a : arms.values()) {
                if (a != baselineArm) {
                    canaries.add(a);
                }
            }
        }
        tests = canaries.size() * METRICS.size();
        compare(canaries);
    }

    /** Reads every file (directories: their *.jfr files, recursively, in name order) and compares the arms. */
    public static FleetReport read(List<Path> paths, Options options) {
        return new FleetReport(options, RecordingFiles.of(paths));
    }

    public List<Input> inputs() {
        return inputs;
    }

    public Map<String, Arm> arms() {
        return arms;
    }

    public Arm baseline() {
        return baselineArm;
    }

    /** Why there is no baseline (null when there is one). */
    public String baselineProblem() {
        return baselineProblem;
    }

    public List<ArmComparison> comparisons() {
        return comparisons;
    }

    public List<Rollback> rollbacks() {
        return model.rollbacks;
    }

    /**
     * Allocation storms of a shared event loop (flagged loop-level SendPathAllocation windows, no connection
     * blamed): per loop, how many windows, the highest rate, the first and last.
     */
    public static final class LoopAllocationStorm extends Span {
        public final String library;
        public final String thread;
        public long windows;
        public long maxRate;

        LoopAllocationStorm(String library, String thread) {
            this.library = library;
            this.thread = thread;
        }
    }

    /** Allocation storms of event loops, per loop in the order first recorded. */
    public List<LoopAllocationStorm> loopAllocationStorms() {
        return new ArrayList<>(model.loopAllocationStorms.values());
    }

    /** Spins of shared event loops themselves, one per episode, in the order first recorded. */
    public List<LoopSpin> loopSpins() {
        return new ArrayList<>(model.loopSpins.values());
    }

    /** Fallbacks per cause, the most frequent first. */
    public List<FallbackCause> fallbacks() {
        List<FallbackCause> l = new ArrayList<>(model.fallbacks.values());
        l.sort((a, b) -> Long.compare(b.count, a.count));
        return l;
    }

    /** The module verdicts per module and version (in their order), each verdict once; empty without ModuleVerdict events. */
    public List<ModuleVerdicts> moduleVerdicts() {
        Map<String, ModuleVerdicts> byModule = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
        for (ModuleVerdict v : model.moduleVerdicts.values()) {
            ModuleVerdicts m = byModule.computeIfAbsent(v.module() + " " + v.version(),
                    k -> new ModuleVerdicts(v.module(), v.version()));
            if (v.applied()) {
                m.appliedLoaders++;
            } else {
                m.skippedLoaders.computeIfAbsent(v.reason(), k -> new ArrayList<>()).add(v.classLoader());
            }
        }
        return new ArrayList<>(byModule.values());
    }

    /** Summaries seen in more than one file (same agent instance, connection and sequence), counted once. */
    public long duplicateSummaries() {
        return model.duplicateSummaries;
    }

    public Options options() {
        return options;
    }

    /** Significance level of each test (Bonferroni over all tests of the report). */
    public double alphaPerTest() {
        return tests > 0 ? Comparison.ALPHA / tests : Comparison.ALPHA;
    }

    /** The earliest ccagent event end of the recordings read (duplicates aside); null without one. */
    public Instant spanFirst() {
        return inputs.stream().filter(i -> i.duplicateOf == null && i.first != null).map(i -> i.first)
                .min(Instant::compareTo).orElse(null);
    }

    /** The latest ccagent event end of the recordings read; null without one. */
    public Instant spanLast() {
        return inputs.stream().filter(i -> i.duplicateOf == null && i.last != null).map(i -> i.last)
                .max(Instant::compareTo).orElse(null);
    }

    /**
     * The time span judged, in words: "FIRST to LAST (D s)", the first and last ccagent event written in the
     * recordings read; "no events" when none was read.
     */
    public String span() {
        Instant first = spanFirst();
        Instant last = spanLast();
        if (first == null || last == null) {
            return "no events";
        }
        return first + " to " + last + String.format(java.util.Locale.ROOT, " (%.1f s)",
                java.time.Duration.between(first, last).toNanos() / 1e9);
    }

    public int connections() {
        return arms.values().stream().mapToInt(a -> a.connections).sum();
    }

    /**
     * Exit status: 0 when every input was read whole (duplicates skipped and summaries of another agent
     * version lacking fields are noted, not failures) and connections were found; 1 when some input had a
     * problem (the rest is still reported) or no connection was found at all.
     */
    public int exitStatus() {
        boolean problem = inputs.stream().anyMatch(i -> i.problem != null);
        return problem || connections() == 0 ? 1 : 0;
    }

    // ---- reading and comparing

    private static void readFile(Input in, EventDecoder decoder) {
        decoder.file(in);
        try {
            JfrEvents.read(in.path, decoder::accept);
        } catch (JfrEvents.Damaged e) {
            in.problem = in.events == 0
                    ? "not a readable JFR recording (" + e.getMessage() + ")"
                    : "truncated or damaged after " + in.events + " events (" + e.getMessage()
                    + "): the events before the damage are counted";
            return;
        }
        if (in.ccagentEvents == 0) {
            in.problem = "no ccagent events among its " + in.events
                    + " events: not a ccagent recording, or recorded without ccagent's settings (jfr=...)";
        }
    }

    /** Every canary arm against the baseline, per metric, at the Bonferroni level over all tests. */
    private void compare(List<Arm> canaries) {
        int armIndex = 0;
        for (Arm a : canaries) {
            ArmComparison ac = new ArmComparison(a, baselineArm);
            for (int m = 0; m < METRICS.size(); m++) {
                String metric = METRICS.get(m);
                ac.metrics.add(Comparison.of(metric, metric.startsWith("goodput"), a.metric(metric),
                        baselineArm.metric(metric), alphaPerTest(), options.resamples,
                        options.seed * 1_000_003L + armIndex * 101L + m));
            }
            comparisons.add(ac);
            armIndex++;
        }
    }
}
