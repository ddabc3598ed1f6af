package dev.ccagent.agent.report;

import dev.ccagent.agent.report.stats.Bootstrap;
import dev.ccagent.agent.report.stats.Comparison;
import dev.ccagent.agent.report.stats.Quantiles;
import jdk.jfr.EventType;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;

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
 */
public final class FleetReport {

    static final String SUMMARY = "dev.ccagent.ConnectionSummary";
    static final String STATE = "dev.ccagent.CongestionState";
    static final String STALL = "dev.ccagent.PacingStall";
    static final String ROLLED_BACK = "dev.ccagent.CanaryRolledBack";
    static final Map<String, String> ALARMS = Map.of("dev.ccagent.SendLoopSpin", "SendLoopSpin",
            "dev.ccagent.AckOnlySendLoop", "AckOnlySendLoop", "dev.ccagent.SendPathAllocation", "SendPathAllocation",
            "dev.ccagent.CpuSpin", "CpuSpin");
    /** ConnectionSummary fields the report reads; a recording lacking some is reported by name. */
    static final List<String> SUMMARY_FIELDS = List.of("agentInstance", "library", "connectionId", "canaryArm",
            "algorithm", "controller", "sequence", "lifetime", "bytesSent", "bytesAcked", "bytesLost", "rttP50",
            "rttP95", "appLimitedTime", "leftSlowStart", "role");
    /**
     * Optional ConnectionSummary field (newer agents): first 1-RTT packet to last acknowledgement. Goodput
     * divides by it when present and positive, else by lifetime; its absence is not reported as missing.
     */
    static final String TRANSFER_TIME = "transferTime";
    /** Metrics compared, in report order. */
    public static final List<String> METRICS = List.of("goodput", "goodput-left-slow-start", "rtt-p50", "rtt-p95",
            "loss-rate");
    /** A pacing stall longer than this many times the connection's median RTT is counted as long. */
    public static final double STALL_RTT_FACTOR = 1.0;
    /** Time-series bins per arm at most (the bin width doubles to stay below). */
    static final int MAX_BINS = 240;
    static final long FIRST_BIN_NANOS = 250_000_000L;

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
        /** ConnectionSummary fields this recording's event type lacks (an agent of another version). */
        public final Set<String> missingFields = new java.util.TreeSet<>();

        Input(Path path) {
            this.path = path;
        }

        public String status() {
            return duplicateOf != null ? "duplicate" : problem != null ? "problem" : "read";
        }
    }

    /** One connection as the report sees it (its last summary, or its CongestionState samples). */
    static final class Conn {
        String library = "";
        String connectionId = "";
        String role = "";
        String arm = "";
        String algorithm = "";
        String controller = "";
        long sequence = -1;
        double lifetimeNanos = Double.NaN;
        /** First 1-RTT packet to last acknowledgement; NaN when the recording lacks it. */
        double transferNanos = Double.NaN;
        double bytesSent = Double.NaN;
        double bytesAcked = Double.NaN;
        double bytesLost = Double.NaN;
        double rttP50 = Double.NaN;
        double rttP95 = Double.NaN;
        double appLimited = Double.NaN;
        /** 1 left slow start, 0 did not, -1 unknown. */
        int leftSlowStart = -1;
        boolean fromStates;

        /** bytesAcked over transferTime when the agent measured one, else over lifetime (older agents). */
        double goodput() {
            double nanos = transferNanos > 0 ? transferNanos : lifetimeNanos;
            return nanos > 0 && bytesAcked >= 0 ? bytesAcked * 8 / (nanos / 1e9) : Double.NaN;
        }

        double lossRate() {
            return bytesSent > 0 && bytesLost >= 0 ? bytesLost / bytesSent : Double.NaN;
        }
    }

    /** A connection's CongestionState samples, folded as they stream by. */
    static final class StateConn {
        String arm;
        String algorithm;
        long firstNanos = Long.MAX_VALUE;
        long lastNanos = Long.MIN_VALUE;
        long minAcked = Long.MAX_VALUE;
        long maxAcked = Long.MIN_VALUE;
        boolean leftSlowStart;
        final LogHistogram rtt = new LogHistogram();
        // periodic samples per mode, and their first and last time: mode shares that do not depend on the
        // order in which the file hands out the events (JFR keeps no time order across threads)
        String[] modes = new String[2];
        int[] modeSamples = new int[2];
        int periodicSamples;
        long firstPeriodic = Long.MAX_VALUE;
        long lastPeriodic = Long.MIN_VALUE;
        double lastSrtt;

        void countMode(String mode, long t) {
            periodicSamples++;
            firstPeriodic = Math.min(firstPeriodic, t);
            lastPeriodic = Math.max(lastPeriodic, t);
            for (int i = 0; i < modes.length; i++) {
                if (modes[i] == null) {
                    modes[i] = mode;
                }
                if (modes[i].equals(mode)) {
                    modeSamples[i]++;
                    return;
                }
            }
            modes = java.util.Arrays.copyOf(modes, modes.length * 2);
            modeSamples = java.util.Arrays.copyOf(modeSamples, modes.length);
            modes[modes.length / 2] = mode;
            modeSamples[modes.length / 2] = 1;
        }
    }

    /** Alarm counts of one connection (sparse: only connections with alarms). */
    static final class Alarms {
        final Map<String, Integer> counts = new TreeMap<>();
        int stalls;
        LogHistogram stallWaits;
    }

    /** Median and p10/p90 per time bin of one quantity of one arm. */
    static final class Series {
        long binNanos = FIRST_BIN_NANOS;
        final List<LogHistogram> bins = new ArrayList<>();

        void add(long sinceStartNanos, double v) {
            long b = Math.max(0, sinceStartNanos) / binNanos;
            while (b >= MAX_BINS) {
                List<LogHistogram> merged = new ArrayList<>();
                for (int i = 0; i < bins.size(); i += 2) {
                    LogHistogram h = new LogHistogram();
                    h.addAll(bins.get(i));
                    if (i + 1 < bins.size()) {
                        h.addAll(bins.get(i + 1));
                    }
                    merged.add(h);
                }
                bins.clear();
                bins.addAll(merged);
                binNanos *= 2;
                b = Math.max(0, sinceStartNanos) / binNanos;
            }
            while (bins.size() <= b) {
                bins.add(new LogHistogram());
            }
            bins.get((int) b).add(v);
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
        final Series cwnd = new Series();
        final Series srtt = new Series();
        final Series pacing = new Series();

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
    public static final class Rollback {
        public final Instant time;
        public final String arm;
        public final String metric;
        public final String evidence;

        Rollback(Instant time, String arm, String metric, String evidence) {
            this.time = time;
            this.arm = arm;
            this.metric = metric;
            this.evidence = evidence;
        }
    }

    final Options options;
    final List<Input> inputs = new ArrayList<>();
    final Map<String, Conn> summaries = new HashMap<>();
    final Map<String, StateConn> states = new HashMap<>();
    final Map<String, Alarms> alarms = new HashMap<>();
    /** Spin episodes counted (an episode is recorded several times while it lasts). */
    private final java.util.Set<Object> spinEpisodes = new java.util.HashSet<>();
    final Map<String, Arm> seriesArms = new TreeMap<>();
    final List<Rollback> rollbacks = new ArrayList<>();
    final Map<String, String> strings = new HashMap<>();
    long duplicateSummaries;
    Map<String, Arm> arms;
    Arm baselineArm;
    String baselineProblem;
    final List<ArmComparison> comparisons = new ArrayList<>();
    int tests;

    private FleetReport(Options options) {
        this.options = options;
    }

    /** Reads every file (directories: their *.jfr files, recursively, in name order) and compares the arms. */
    public static FleetReport read(List<Path> paths, Options options) {
        FleetReport r = new FleetReport(options);
        r.collect(paths);
        r.markDuplicateFiles();
        for (Input in : r.inputs) {
            if (in.duplicateOf == null && in.problem == null) {
                r.readFile(in);
            }
        }
        r.finish();
        return r;
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
        return rollbacks;
    }

    /** Summaries seen in more than one file (same agent instance, connection and sequence), counted once. */
    public long duplicateSummaries() {
        return duplicateSummaries;
    }

    public Options options() {
        return options;
    }

    /** Significance level of each test (Bonferroni over all tests of the report). */
    public double alphaPerTest() {
        return tests > 0 ? Comparison.ALPHA / tests : Comparison.ALPHA;
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

    // ---- reading

    private void collect(List<Path> paths) {
        Set<Path> seen = new HashSet<>();
        for (Path p : paths) {
            if (Files.isDirectory(p)) {
                List<Path> files;
                try (Stream<Path> walk = Files.walk(p)) {
                    files = walk.filter(f -> f.getFileName().toString().endsWith(".jfr") && Files.isRegularFile(f))
                            .sorted().collect(Collectors.toList());
                } catch (IOException | RuntimeException e) {
                    Input in = new Input(p);
                    in.problem = "cannot list the directory: " + e.getMessage();
                    inputs.add(in);
                    continue;
                }
                if (files.isEmpty()) {
                    Input in = new Input(p);
                    in.problem = "directory holds no .jfr files";
                    inputs.add(in);
                }
                for (Path f : files) {
                    add(f, seen);
                }
            } else {
                add(p, seen);
            }
        }
    }

    private void add(Path p, Set<Path> seen) {
        Input in = new Input(p);
        if (!Files.exists(p)) {
            in.problem = "no such file or directory";
            inputs.add(in);
            return;
        }
        Path real;
        try {
            real = p.toRealPath();
        } catch (IOException e) {
            real = p.toAbsolutePath().normalize();
        }
        if (!seen.add(real)) {
            return; // the same file named twice (or inside a directory also named): read once, silently
        }
        try {
            if (Files.size(p) == 0) {
                in.problem = "empty file (0 bytes): the JVM may have stopped before the recording was written";
            }
        } catch (IOException e) {
            in.problem = "cannot read: " + e.getMessage();
        }
        inputs.add(in);
    }

    /** Files of equal size and equal SHA-256 are one recording: the later ones are marked duplicates. */
    private void markDuplicateFiles() {
        Map<Long, List<Input>> bySize = new HashMap<>();
        for (Input in : inputs) {
            if (in.problem == null) {
                try {
                    bySize.computeIfAbsent(Files.size(in.path), k -> new ArrayList<>()).add(in);
                } catch (IOException e) {
                    in.problem = "cannot read: " + e.getMessage();
                }
            }
        }
        for (List<Input> group : bySize.values()) {
            if (group.size() < 2) {
                continue;
            }
            Map<String, Input> byHash = new HashMap<>();
            for (Input in : group) {
                String hash;
                try {
                    hash = sha256(in.path);
                } catch (IOException e) {
                    in.problem = "cannot read: " + e.getMessage();
                    continue;
                }
                Input first = byHash.putIfAbsent(hash, in);
                if (first != null) {
                    in.duplicateOf = first.path;
                }
            }
        }
    }

    private static String sha256(Path p) throws IOException {
        MessageDigest md;
        try {
            md = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        byte[] buf = new byte[1 << 16];
        try (InputStream in = Files.newInputStream(p)) {
            int n;
            while ((n = in.read(buf)) > 0) {
                md.update(buf, 0, n);
            }
        }
        return java.util.HexFormat.of().formatHex(md.digest());
    }

    private void readFile(Input in) {
        Map<EventType, boolean[]> layouts = new IdentityHashMap<>();
        try (RecordingFile file = new RecordingFile(in.path)) {
            while (file.hasMoreEvents()) {
                RecordedEvent e = file.readEvent();
                in.events++;
                accept(in, e, layouts);
            }
        } catch (IOException | RuntimeException | Error e) {
            if (e instanceof VirtualMachineError && !(e instanceof StackOverflowError)) {
                throw (VirtualMachineError) e;
            }
            String why = e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
            in.problem = in.events == 0
                    ? "not a readable JFR recording (" + why + ")"
                    : "truncated or damaged after " + in.events + " events (" + why
                    + "): the events before the damage are counted";
            return;
        }
        if (in.ccagentEvents == 0) {
            in.problem = "no ccagent events among its " + in.events
                    + " events: not a ccagent recording, or recorded without ccagent's settings (jfr=...)";
        }
    }

    private void accept(Input in, RecordedEvent e, Map<EventType, boolean[]> layouts) {
        EventType type = e.getEventType();
        String name = type.getName();
        if (!name.startsWith("dev.ccagent.")) {
            return;
        }
        in.ccagentEvents++;
        switch (name) {
            case SUMMARY:
                in.summaries++;
                summary(in, e, layouts.computeIfAbsent(type, t -> layout(in, t)));
                break;
            case STATE:
                state(e);
                break;
            case STALL:
                stall(e);
                break;
            case ROLLED_BACK:
                rollbacks.add(new Rollback(e.getStartTime(), intern(string(e, "canaryArm")) + " "
                        + intern(string(e, "canaryAlgorithm")), string(e, "metric"), string(e, "evidence")));
                break;
            default:
                String alarm = ALARMS.get(name);
                if (alarm != null) {
                    if (name.equals("dev.ccagent.SendPathAllocation") && e.hasField("flagged") && !e.getBoolean("flagged")) {
                        return;
                    }
                    if (name.equals("dev.ccagent.CpuSpin") && !spinEpisodes.add(CpuSpinLine.episodeKey(e))) {
                        return; // one alarm per episode, however many of its events were recorded
                    }
                    alarmsOf(e).counts.merge(alarm, 1, Integer::sum);
                }
        }
    }

    /** Which of {@link #SUMMARY_FIELDS} the event type has; the missing ones are noted on the input. */
    private static boolean[] layout(Input in, EventType t) {
        boolean[] has = new boolean[SUMMARY_FIELDS.size() + 1];
        has[SUMMARY_FIELDS.size()] = t.getField(TRANSFER_TIME) != null;
        for (int i = 0; i < SUMMARY_FIELDS.size(); i++) {
            has[i] = t.getField(SUMMARY_FIELDS.get(i)) != null;
            if (!has[i]) {
                in.missingFields.add(SUMMARY_FIELDS.get(i));
            }
        }
        return has;
    }

    private void summary(Input in, RecordedEvent e, boolean[] has) {
        String id = has[2] ? string(e, "connectionId") : "";
        if (id.isEmpty()) {
            return; // cannot be told apart from other connections: left out (and the missing field is reported)
        }
        String agent = has[0] ? string(e, "agentInstance") : "";
        long sequence = has[6] ? number(e, "sequence") : 0;
        String role = intern(has[15] ? string(e, "role") : "");
        // both ends of one connection in one JVM share the connection id: the role keeps them apart
        String key = agent + "|" + role + "|" + id;
        Conn c = summaries.get(key);
        if (c != null) {
            if (sequence == c.sequence) {
                duplicateSummaries++;
                return;
            }
            if (sequence < c.sequence) {
                return; // an earlier periodic summary: the later one already covers it
            }
        } else {
            c = new Conn();
            summaries.put(key, c);
        }
        c.sequence = sequence;
        c.role = role;
        c.library = intern(has[1] ? string(e, "library") : "");
        c.connectionId = id;
        c.arm = intern(has[3] ? string(e, "canaryArm") : "");
        c.algorithm = intern(has[4] ? string(e, "algorithm") : "");
        c.controller = intern(has[5] ? string(e, "controller") : "");
        c.lifetimeNanos = has[7] ? number(e, "lifetime") : Double.NaN;
        c.transferNanos = has[SUMMARY_FIELDS.size()] ? number(e, TRANSFER_TIME) : Double.NaN;
        c.bytesSent = has[8] ? number(e, "bytesSent") : Double.NaN;
        c.bytesAcked = has[9] ? number(e, "bytesAcked") : Double.NaN;
        c.bytesLost = has[10] ? number(e, "bytesLost") : Double.NaN;
        c.rttP50 = has[11] ? positiveOrNaN(number(e, "rttP50")) : Double.NaN;
        c.rttP95 = has[12] ? positiveOrNaN(number(e, "rttP95")) : Double.NaN;
        c.appLimited = has[13] ? number(e, "appLimitedTime") : Double.NaN;
        c.leftSlowStart = has[14] ? (e.getBoolean("leftSlowStart") ? 1 : 0) : -1;
    }

    private void state(RecordedEvent e) {
        String library = string(e, "library");
        String id = string(e, "connectionId");
        String key = library + "|" + id;
        StateConn s = states.get(key);
        if (s == null) {
            s = new StateConn();
            states.put(key, s);
        }
        String arm = intern(string(e, "canaryArm"));
        String algorithm = intern(string(e, "algorithm"));
        s.arm = arm;
        s.algorithm = algorithm;
        long t = e.getStartTime().getEpochSecond() * 1_000_000_000L + e.getStartTime().getNano();
        s.firstNanos = Math.min(s.firstNanos, t);
        s.lastNanos = Math.max(s.lastNanos, t);
        long acked = number(e, "bytesAcked");
        s.minAcked = Math.min(s.minAcked, acked);
        s.maxAcked = Math.max(s.maxAcked, acked);
        String mode = intern(string(e, "mode"));
        if (!mode.isEmpty() && !mode.equalsIgnoreCase("slow start") && !mode.equalsIgnoreCase("STARTUP")) {
            s.leftSlowStart = true;
        }
        long srtt = number(e, "smoothedRtt");
        if (srtt > 0) {
            s.rtt.add(srtt);
            s.lastSrtt = srtt;
        }
        Arm series = seriesArms.computeIfAbsent(seriesName(arm, algorithm),
                k -> new Arm(k, arm, algorithm));
        // mode time and the time series from the periodic samples only: a mode change is an extra sample at
        // an uneven time, written by a sender thread (so the file may hand it out before earlier samples)
        String trigger = string(e, "trigger");
        if (!trigger.isEmpty() && !trigger.equals("periodic")) {
            return;
        }
        s.countMode(mode, t);
        long since = t - s.firstPeriodic;
        series.cwnd.add(since, number(e, "congestionWindow"));
        if (srtt > 0) {
            series.srtt.add(since, srtt);
        }
        long pacing = number(e, "pacingRate");
        if (pacing > 0) {
            series.pacing.add(since, pacing);
        }
    }

    private void stall(RecordedEvent e) {
        Alarms a = alarmsOf(e);
        a.stalls++;
        if (a.stallWaits == null) {
            a.stallWaits = new LogHistogram();
        }
        a.stallWaits.add(number(e, "waitTime"));
    }

    private Alarms alarmsOf(RecordedEvent e) {
        return alarms.computeIfAbsent(string(e, "library") + "|" + string(e, "connectionId"), k -> new Alarms());
    }

    // ---- aggregation

    private void finish() {
        // every connection once: its last summary, or else its CongestionState samples
        Map<String, List<Conn>> byArm = new TreeMap<>();
        Set<String> summarised = new HashSet<>();
        for (Conn c : summaries.values()) {
            summarised.add(c.library + "|" + c.connectionId);
        }
        List<Conn> all = new ArrayList<>(summaries.values());
        for (Map.Entry<String, StateConn> e : states.entrySet()) {
            if (summarised.contains(e.getKey())) {
                continue;
            }
            StateConn s = e.getValue();
            Conn c = new Conn();
            int bar = e.getKey().indexOf('|');
            c.library = e.getKey().substring(0, bar);
            c.connectionId = e.getKey().substring(bar + 1);
            c.arm = s.arm;
            c.algorithm = s.algorithm;
            c.controller = "";
            c.fromStates = true;
            c.lifetimeNanos = s.lastNanos > s.firstNanos ? s.lastNanos - s.firstNanos : Double.NaN;
            c.bytesAcked = s.maxAcked >= s.minAcked ? s.maxAcked - s.minAcked : Double.NaN;
            c.rttP50 = s.rtt.quantile(0.5);
            c.rttP95 = s.rtt.quantile(0.95);
            c.leftSlowStart = s.leftSlowStart ? 1 : 0;
            all.add(c);
        }
        for (Conn c : all) {
            byArm.computeIfAbsent(armName(c), k -> new ArrayList<>()).add(c);
        }
        foldFallbacks(byArm);
        arms = new LinkedHashMap<>();
        for (Map.Entry<String, List<Conn>> e : byArm.entrySet()) {
            arms.put(e.getKey(), arm(e.getKey(), e.getValue()));
        }
        // time per mode: a connection's periodic samples span first..last; each mode gets the share of that
        // span its samples have (one sample: no span, no time)
        for (StateConn s : states.values()) {
            if (s.periodicSamples < 2) {
                continue;
            }
            Arm series = seriesArms.get(seriesName(s.arm, s.algorithm));
            if (series == null) {
                continue;
            }
            double span = (s.lastPeriodic - s.firstPeriodic) / 1e9;
            for (int i = 0; i < s.modes.length && s.modes[i] != null; i++) {
                series.secondsInMode.merge(s.modes[i].isEmpty() ? "(stock)" : s.modes[i],
                        span * s.modeSamples[i] / s.periodicSamples, Double::sum);
            }
            series.modeTimedConnections++;
        }
        // time series and modes from CongestionState, per arm name
        for (Arm s : seriesArms.values()) {
            Arm a = arms.get(s.name);
            if (a == null) {
                continue;
            }
            a.secondsInMode.putAll(s.secondsInMode);
            a.modeTimedConnections = s.modeTimedConnections;
            copySeries(s.cwnd, a.cwnd);
            copySeries(s.srtt, a.srtt);
            copySeries(s.pacing, a.pacing);
        }
        chooseBaseline();
        if (baselineArm != null) {
            List<Arm> canaries = new ArrayList<>();
            for (Arm a : arms.values()) {
                if (a != baselineArm) {
                    canaries.add(a);
                }
            }
            tests = canaries.size() * METRICS.size();
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

    private static void copySeries(Series from, Series to) {
        to.binNanos = from.binNanos;
        to.bins.addAll(from.bins);
    }

    /** The arm name CongestionState samples are gathered under ("LABEL ALGORITHM"). */
    private static String seriesName(String arm, String algorithm) {
        return arm + " " + (algorithm.isEmpty() ? "?" : algorithm);
    }

    /** "LABEL ALGORITHM"; client-side connections (an agent on a client) form arms of their own. */
    private static String armName(Conn c) {
        return (c.arm.isEmpty() ? "unassigned" : c.arm) + " " + (c.algorithm.isEmpty() ? "?" : c.algorithm)
                + ("client".equals(c.role) ? " (client)" : "");
    }

    /**
     * A connection that fell back to the stock controller stays in the arm it was assigned to (intention to
     * treat): when its label has exactly one arm of connections that did not fall back, it is counted there.
     */
    private static void foldFallbacks(Map<String, List<Conn>> byArm) {
        Map<String, List<String>> regularByLabel = new HashMap<>();
        for (Map.Entry<String, List<Conn>> e : byArm.entrySet()) {
            if (e.getValue().stream().anyMatch(c -> !isFallback(c))) {
                String label = e.getValue().get(0).arm;
                regularByLabel.computeIfAbsent(label, k -> new ArrayList<>()).add(e.getKey());
            }
        }
        for (String name : new ArrayList<>(byArm.keySet())) {
            List<Conn> list = byArm.get(name);
            List<Conn> fallbacks = list.stream().filter(FleetReport::isFallback).collect(Collectors.toList());
            if (fallbacks.isEmpty()) {
                continue;
            }
            List<String> targets = regularByLabel.getOrDefault(fallbacks.get(0).arm, List.of());
            if (targets.size() == 1 && !targets.get(0).equals(name)) {
                byArm.get(targets.get(0)).addAll(fallbacks);
                list.removeAll(fallbacks);
                if (list.isEmpty()) {
                    byArm.remove(name);
                }
            }
        }
    }

    private static boolean isFallback(Conn c) {
        return c.controller.toLowerCase(Locale.ROOT).startsWith("fallback");
    }

    private Arm arm(String name, List<Conn> conns) {
        Conn first = conns.get(0);
        Arm a = new Arm(name, first.arm.isEmpty() ? "unassigned" : first.arm,
                first.algorithm.isEmpty() ? "?" : first.algorithm);
        double[] goodput = new double[conns.size()];
        double[] leftSs = new double[conns.size()];
        double[] p50 = new double[conns.size()];
        double[] p95 = new double[conns.size()];
        double[] loss = new double[conns.size()];
        double[] appLimited = new double[conns.size()];
        int i = 0;
        for (Conn c : conns) {
            a.connections++;
            if (c.fromStates) {
                a.fromStates++;
                a.controllers.merge("(no summary)", 1, Integer::sum);
            } else {
                a.fromSummaries++;
                a.controllers.merge(c.controller.isEmpty() ? "?" : c.controller, 1, Integer::sum);
            }
            if (c.bytesAcked >= 0) {
                a.bytesAcked += c.bytesAcked;
            }
            if (c.bytesSent >= 0 && c.bytesLost >= 0) {
                a.bytesSent += c.bytesSent;
                a.bytesLost += c.bytesLost;
            }
            goodput[i] = c.goodput();
            leftSs[i] = c.leftSlowStart == 1 ? goodput[i] : Double.NaN;
            p50[i] = c.rttP50 / 1e6;
            p95[i] = c.rttP95 / 1e6;
            loss[i] = c.lossRate();
            appLimited[i] = c.lifetimeNanos > 0 && c.appLimited >= 0 ? Math.min(1, c.appLimited / c.lifetimeNanos)
                    : Double.NaN;
            Alarms al = alarms.get(c.library + "|" + c.connectionId);
            if (al != null) {
                al.counts.forEach((k, v) -> a.alarms.merge(k, v, Integer::sum));
                if (al.stalls > 0) {
                    a.pacingStalls += al.stalls;
                    a.connectionsWithStalls++;
                    if (c.rttP50 > 0) {
                        long longOnes = al.stallWaits.countAbove(STALL_RTT_FACTOR * c.rttP50);
                        a.stallsLongerThanRtt += longOnes;
                        if (longOnes > 0) {
                            a.connectionsWithLongStalls++;
                        }
                    }
                }
            }
            i++;
        }
        a.goodput = Quantiles.sorted(goodput);
        a.goodputLeftSlowStart = Quantiles.sorted(leftSs);
        a.rttP50Millis = Quantiles.sorted(p50);
        a.rttP95Millis = Quantiles.sorted(p95);
        a.lossRate = Quantiles.sorted(loss);
        a.appLimitedShare = Quantiles.sorted(appLimited);
        return a;
    }

    private void chooseBaseline() {
        if (arms.isEmpty()) {
            baselineProblem = "no connections";
            return;
        }
        if (options.baseline != null) {
            Arm byName = arms.get(options.baseline);
            List<Arm> byLabel = arms.values().stream().filter(a -> a.label.equals(options.baseline))
                    .collect(Collectors.toList());
            if (byName != null) {
                baselineArm = byName;
            } else if (byLabel.size() == 1) {
                baselineArm = byLabel.get(0);
            } else {
                baselineProblem = "--baseline " + options.baseline + " names " + (byLabel.isEmpty() ? "no arm"
                        : byLabel.size() + " arms") + "; arms: " + String.join(", ", arms.keySet());
            }
            return;
        }
        List<Arm> defaults = arms.values().stream().filter(a -> a.label.equals("default")).collect(Collectors.toList());
        if (defaults.size() == 1) {
            baselineArm = defaults.get(0);
        } else if (defaults.isEmpty()) {
            baselineProblem = "no arm labelled 'default'; name the baseline with --baseline ARM (arms: "
                    + String.join(", ", arms.keySet()) + ")";
        } else {
            baselineProblem = "several 'default' arms (" + defaults.stream().map(a -> a.name)
                    .collect(Collectors.joining(", ")) + "): name the baseline with --baseline ARM";
        }
    }

    // ---- helpers

    private String intern(String s) {
        String k = strings.putIfAbsent(s, s);
        return k != null ? k : s;
    }

    private static double positiveOrNaN(long v) {
        return v > 0 ? v : Double.NaN;
    }

    static String string(RecordedEvent e, String field) {
        if (!e.hasField(field)) {
            return "";
        }
        Object v = e.getValue(field);
        return v == null ? "" : v.toString();
    }

    static long number(RecordedEvent e, String field) {
        if (!e.hasField(field)) {
            return 0;
        }
        Object v = e.getValue(field);
        if (v instanceof java.time.Duration) {
            return ((java.time.Duration) v).toNanos();
        }
        return v instanceof Number ? ((Number) v).longValue() : 0;
    }
}
