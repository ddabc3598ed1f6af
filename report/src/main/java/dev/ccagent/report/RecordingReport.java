package dev.ccagent.report;

import dev.ccagent.jfr.EventFields;
import dev.ccagent.jfr.EventNames;
import jdk.jfr.consumer.RecordedEvent;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import static dev.ccagent.report.JfrEvents.number;
import static dev.ccagent.report.JfrEvents.string;

/**
 * Reads a JFR recording (ccagent's events, by their stable names) and summarises it per canary arm:
 * connections, goodput, RTT percentiles, losses, time per congestion mode, and the spin, pacing
 * and allocation alarms. Reads what it can: a truncated or corrupt file yields the events before
 * the damage and a {@link #problem()} saying where reading stopped.
 *
 * <p>The per-file view with every sample and event kept (the fleet report, {@link FleetReport}, keeps
 * neither); it reads with the report's one reader ({@link JfrEvents}) and counts alarms as it does
 * (unflagged allocations left out, one CPU spin per episode).
 */
public final class RecordingReport {

    static final String CONGESTION_STATE = EventNames.CONGESTION_STATE;
    static final String ALGORITHM_ASSIGNED = EventNames.ALGORITHM_ASSIGNED;
    static final List<String> ALARM_EVENTS = List.of(EventNames.SEND_LOOP_SPIN, EventNames.ACK_ONLY_SEND_LOOP,
            EventNames.PACING_STALL, EventNames.SEND_PATH_ALLOCATION, EventNames.CPU_SPIN);

    /** One CongestionState sample. */
    public static final class Sample {
        public final Instant time;
        public final String mode;
        public final long congestionWindow;
        public final long bytesInFlight;
        public final long pacingRate;
        public final long bandwidthEstimate;
        public final long smoothedRttNanos;
        public final long minRttNanos;
        public final long packetsLost;
        public final long bytesAcked;

        Sample(RecordedEvent e) {
            time = e.getStartTime();
            mode = string(e, EventFields.MODE);
            congestionWindow = number(e, EventFields.CONGESTION_WINDOW);
            bytesInFlight = number(e, EventFields.BYTES_IN_FLIGHT);
            pacingRate = number(e, EventFields.PACING_RATE);
            bandwidthEstimate = number(e, EventFields.BANDWIDTH_ESTIMATE);
            smoothedRttNanos = number(e, EventFields.SMOOTHED_RTT);
            minRttNanos = number(e, EventFields.MIN_RTT);
            packetsLost = number(e, EventFields.PACKETS_LOST);
            bytesAcked = number(e, EventFields.BYTES_ACKED);
        }
    }

    /** A connection's series. */
    public static final class Connection {
        public final String library;
        public final String id;
        String arm = "unassigned";
        String algorithm = "";
        final List<Sample> samples = new ArrayList<>();
        final Map<String, Integer> alarms = new TreeMap<>();

        Connection(String library, String id) {
            this.library = library;
            this.id = id;
        }

        public String arm() {
            return arm;
        }

        public String algorithm() {
            return algorithm;
        }

        public List<Sample> samples() {
            return samples;
        }

        /** Acknowledged bytes per second between the first and the last sample; 0 with fewer than two. */
        public double goodputBitsPerSecond() {
            if (samples.size() < 2) {
                return 0;
            }
            Sample a = samples.get(0);
            Sample b = samples.get(samples.size() - 1);
            double seconds = java.time.Duration.between(a.time, b.time).toNanos() / 1e9;
            return seconds > 0 ? (b.bytesAcked - a.bytesAcked) * 8 / seconds : 0;
        }

        /**
         * The {@code p}th percentile (nearest rank, as the arm summaries) of this connection's smoothed
         * RTT samples, in milliseconds; 0 without any.
         */
        public double rttPercentileMillis(double p) {
            long[] sorted = samples.stream().mapToLong(x -> x.smoothedRttNanos).filter(v -> v > 0).sorted().toArray();
            return percentile(sorted, p) / 1e6;
        }

        long bytesAcked() {
            return samples.isEmpty() ? 0 : samples.get(samples.size() - 1).bytesAcked - samples.get(0).bytesAcked;
        }

        long packetsLost() {
            return samples.isEmpty() ? 0 : samples.get(samples.size() - 1).packetsLost;
        }
    }

    /** The figures of one arm (label and algorithm). */
    public static final class ArmSummary {
        public final String arm;
        public int connections;
        public long bytesAcked;
        public long packetsLost;
        public double meanGoodputBitsPerSecond;
        public double rttP50Millis;
        public double rttP95Millis;
        public final Map<String, Double> secondsInMode = new TreeMap<>();
        public final Map<String, Integer> alarms = new TreeMap<>();

        ArmSummary(String arm) {
            this.arm = arm;
        }
    }

    private final Path file;
    private final Map<String, Connection> connections = new LinkedHashMap<>();
    private final Map<String, Integer> unattributedAlarms = new TreeMap<>();
    /** Spin episodes, each by its latest event. */
    private final Map<Object, RecordedEvent> cpuSpins = new LinkedHashMap<>();
    private final List<RecordedEvent> ours = new ArrayList<>();
    private final Map<String, Integer> counts = new TreeMap<>();
    private long events;
    private String problem;

    private RecordingReport(Path file) {
        this.file = file;
    }

    /**
     * Reads {@code file}. Throws only when nothing can be read at all (missing file, not a
     * recording); otherwise damage is reported by {@link #problem()}.
     */
    public static RecordingReport read(Path file) throws IOException {
        if (!Files.isRegularFile(file)) {
            throw new IOException("no such file: " + file);
        }
        if (Files.size(file) == 0) {
            throw new IOException("JFR recording " + file
                    + " is empty (the JVM may have been killed before it was written)");
        }
        RecordingReport r = new RecordingReport(file);
        try {
            r.events = JfrEvents.read(file, r::accept);
        } catch (JfrEvents.Damaged e) {
            r.events = e.eventsRead;
            if (r.events == 0) {
                throw new IOException(file + " is not a readable JFR recording: " + e.getCause().getMessage(),
                        e.getCause());
            }
            r.problem = "the recording is damaged after " + r.events + " events (" + e.getCause().getMessage()
                    + "); the report covers what could be read";
        }
        for (Connection c : r.connections.values()) {
            c.samples.sort(Comparator.comparing(s -> s.time));
        }
        return r;
    }

    private void accept(RecordedEvent e) {
        String type = e.getEventType().getName();
        counts.merge(type, 1, Integer::sum);
        if (type.startsWith("dev.ccagent.")) {
            ours.add(e);
        }
        if (type.equals(CONGESTION_STATE)) {
            Connection c = connection(e);
            c.samples.add(new Sample(e));
            String arm = string(e, EventFields.CANARY_ARM);
            if (!arm.isEmpty()) {
                c.arm = arm;
            }
            String algorithm = string(e, EventFields.ALGORITHM);
            if (!algorithm.isEmpty()) {
                c.algorithm = algorithm;
            }
        } else if (type.equals(ALGORITHM_ASSIGNED)) {
            Connection c = connection(e);
            c.arm = string(e, EventFields.CANARY_ARM);
            c.algorithm = string(e, EventFields.ALGORITHM);
        } else if (ALARM_EVENTS.contains(type)) {
            if (EventDecoder.unflaggedAllocation(e)) {
                return;
            }
            if (type.equals(EventNames.CPU_SPIN) && !CpuSpinLine.keep(cpuSpins, e)) {
                return; // another event of an episode already counted
            }
            String shortName = type.substring("dev.ccagent.".length());
            String id = string(e, EventFields.CONNECTION_ID);
            if (id.isEmpty()) {
                unattributedAlarms.merge(shortName, 1, Integer::sum);
            } else {
                connection(e).alarms.merge(shortName, 1, Integer::sum);
            }
        }
    }

    private Connection connection(RecordedEvent e) {
        String library = string(e, EventFields.LIBRARY);
        String id = string(e, EventFields.CONNECTION_ID);
        return connections.computeIfAbsent(library + "/" + id, k -> new Connection(library, id));
    }

    public Path file() {
        return file;
    }

    public long events() {
        return events;
    }

    /** Why reading stopped early, or null when the whole file was read. */
    public String problem() {
        return problem;
    }

    /** Every event of ccagent's ({@code dev.ccagent.*}) in file order. */
    public List<RecordedEvent> ccagentEvents() {
        return ours;
    }

    /** ccagent's events of one type, in file order. */
    public List<RecordedEvent> events(String name) {
        List<RecordedEvent> out = new ArrayList<>();
        for (RecordedEvent e : ours) {
            if (e.getEventType().getName().equals(name)) {
                out.add(e);
            }
        }
        return out;
    }

    /** CPU spin episodes, each by its latest {@code dev.ccagent.CpuSpin} event (an ended one first), in file order. */
    public List<RecordedEvent> cpuSpinEpisodes() {
        return new ArrayList<>(cpuSpins.values());
    }

    /** Events per type name, all types (JDK's too). */
    public Map<String, Integer> counts() {
        return counts;
    }

    public int count(String name) {
        return counts.getOrDefault(name, 0);
    }

    public List<Connection> connections() {
        return new ArrayList<>(connections.values());
    }

    /** Alarms not tied to a connection. */
    public Map<String, Integer> unattributedAlarms() {
        return unattributedAlarms;
    }

    /** Per arm, keyed "ARM ALGORITHM" (e.g. "canary bbr3"), in name order. */
    public Map<String, ArmSummary> arms() {
        Map<String, List<Connection>> byArm = new TreeMap<>();
        for (Connection c : connections.values()) {
            byArm.computeIfAbsent(c.arm + " " + (c.algorithm.isEmpty() ? "?" : c.algorithm), k -> new ArrayList<>())
                    .add(c);
        }
        Map<String, ArmSummary> out = new LinkedHashMap<>();
        for (Map.Entry<String, List<Connection>> e : byArm.entrySet()) {
            ArmSummary s = new ArmSummary(e.getKey());
            List<Long> rtts = new ArrayList<>();
            double goodputSum = 0;
            int withGoodput = 0;
            for (Connection c : e.getValue()) {
                s.connections++;
                s.bytesAcked += c.bytesAcked();
                s.packetsLost += c.packetsLost();
                double g = c.goodputBitsPerSecond();
                if (g > 0) {
                    goodputSum += g;
                    withGoodput++;
                }
                for (int i = 0; i < c.samples.size(); i++) {
                    Sample smp = c.samples.get(i);
                    if (smp.smoothedRttNanos > 0) {
                        rtts.add(smp.smoothedRttNanos);
                    }
                    if (i + 1 < c.samples.size()) {
                        double dt = java.time.Duration.between(smp.time, c.samples.get(i + 1).time).toNanos() / 1e9;
                        s.secondsInMode.merge(smp.mode.isEmpty() ? "(stock)" : smp.mode, dt, Double::sum);
                    }
                }
                c.alarms.forEach((k, v) -> s.alarms.merge(k, v, Integer::sum));
            }
            s.meanGoodputBitsPerSecond = withGoodput > 0 ? goodputSum / withGoodput : 0;
            long[] sorted = rtts.stream().mapToLong(Long::longValue).sorted().toArray();
            s.rttP50Millis = percentile(sorted, 50) / 1e6;
            s.rttP95Millis = percentile(sorted, 95) / 1e6;
            out.put(e.getKey(), s);
        }
        return out;
    }

    /** The text report. */
    public String text() {
        StringBuilder sb = new StringBuilder();
        sb.append("recording ").append(file).append(": ").append(events).append(" events, ")
                .append(connections.size()).append(" connections\n");
        if (problem != null) {
            sb.append("WARNING: ").append(problem).append('\n');
        }
        Map<String, ArmSummary> arms = arms();
        if (arms.isEmpty()) {
            sb.append("no ccagent congestion events in this recording (was it made with ccagent.jfc or jfr=...?)\n");
        }
        for (ArmSummary a : arms.values()) {
            sb.append(String.format(Locale.ROOT, "%n%s: %d connection%s%n", a.arm, a.connections,
                    a.connections == 1 ? "" : "s"));
            sb.append(String.format(Locale.ROOT, "  goodput      %s mean per connection, %s acknowledged%n",
                    rate(a.meanGoodputBitsPerSecond), bytes(a.bytesAcked)));
            sb.append(String.format(Locale.ROOT, "  RTT          p50 %.1f ms, p95 %.1f ms (smoothed)%n",
                    a.rttP50Millis, a.rttP95Millis));
            sb.append(String.format(Locale.ROOT, "  loss         %d packets lost%s%n", a.packetsLost,
                    a.bytesAcked > 0 ? String.format(Locale.ROOT, " (%.2f per MB acknowledged)",
                            a.packetsLost / (a.bytesAcked / 1e6)) : ""));
            StringBuilder modes = new StringBuilder();
            double total = a.secondsInMode.values().stream().mapToDouble(Double::doubleValue).sum();
            a.secondsInMode.forEach((m, s) -> modes.append(String.format(Locale.ROOT, "%s %.1fs (%.0f%%), ", m, s,
                    total > 0 ? 100 * s / total : 0)));
            sb.append("  modes        ").append(modes.length() > 0 ? modes.substring(0, modes.length() - 2) : "-")
                    .append('\n');
            sb.append("  alarms       ").append(a.alarms.isEmpty() ? "none" : a.alarms.toString()).append('\n');
        }
        if (!unattributedAlarms.isEmpty()) {
            sb.append("\nalarms not tied to a connection: ").append(unattributedAlarms).append('\n');
        }
        CpuSpinLine.section(sb, cpuSpins.values());
        return sb.toString();
    }

    /** The {@code p}-th percentile (0-100) of sorted values by nearest rank; 0 for none. */
    public static long percentile(long[] sorted, double p) {
        if (sorted.length == 0) {
            return 0;
        }
        int i = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
    }

    static String rate(double bps) {
        if (bps >= 1e9) {
            return String.format(Locale.ROOT, "%.2f Gbit/s", bps / 1e9);
        }
        if (bps >= 1e6) {
            return String.format(Locale.ROOT, "%.2f Mbit/s", bps / 1e6);
        }
        return String.format(Locale.ROOT, "%.1f kbit/s", bps / 1e3);
    }

    static String bytes(long b) {
        if (b >= 1L << 30) {
            return String.format(Locale.ROOT, "%.2f GiB", b / (double) (1L << 30));
        }
        if (b >= 1L << 20) {
            return String.format(Locale.ROOT, "%.1f MiB", b / (double) (1L << 20));
        }
        return b + " B";
    }
}
