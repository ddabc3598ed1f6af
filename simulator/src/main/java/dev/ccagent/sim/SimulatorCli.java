package dev.ccagent.sim;

import dev.ccagent.cc.registry.Algorithms;
import dev.ccagent.cc.CcConfigException;
import dev.ccagent.cc.CcSnapshot;
import dev.ccagent.cc.Units;

import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code java -jar ccsim.jar --cc cubic --rate 50mbit --rtt 50ms --buffer 1bdp --loss 0.01 --bytes 50MiB --seed 1 --json}
 *
 * <p>Runs the flows named by {@code --cc} together through one bottleneck, or, with
 * {@code --compare}, each alone on the same link and seed, side by side. Bad flags: one error line
 * on stderr and exit status 2.
 */
public final class SimulatorCli {

    static final String USAGE = String.join("\n",
            "usage: java -jar ccsim.jar --cc NAME[,NAME...] [options]",
            "  --cc NAME[,NAME...]      algorithms, one flow each (" + String.join(", ", Algorithms.names()) + ")",
            "  --compare                run each algorithm alone on the same link and seed, side by side",
            "  --start T[,T...]         start offset per flow (e.g. 0,5s); default 0",
            "  --rate RATE              bottleneck rate, e.g. 20mbit, 1gbit, 5MB/s (default 20mbit)",
            "  --rtt T                  base round-trip time, e.g. 40ms (default 40ms)",
            "  --buffer SIZE|Nbdp       drop-tail buffer: bytes (64KiB, 1MiB) or BDP multiple (default 1bdp)",
            "  --loss P                 random loss probability on the data path, 0 <= P < 1 (default 0)",
            "  --ack-aggregation B/T    hold ACKs until B bytes acked or T passed, e.g. 30KiB/10ms",
            "  --rate-change T:RATE     change the rate at time T, e.g. 20s:2mbit (repeatable)",
            "  --bytes SIZE             bytes per flow, e.g. 50MiB",
            "  --duration T             run time for flows without --bytes, e.g. 30s",
            "  --mss BYTES              datagram size (default 1200)",
            "  --seed N                 random seed (default 1)",
            "  --cc-option [ALGO:]K=V   algorithm option, for all flows or those of ALGO (repeatable)",
            "  --json                   print one JSON object instead of a table",
            "  --trace FILE.csv         write a time series (cwnd, pacing rate, bandwidth, RTT, inflight, queue)",
            "  --help                   this text");

    /** Thrown for bad command lines: printed as one line, exit status 2. */
    static final class UsageException extends RuntimeException {
        UsageException(String message) {
            super(message);
        }
    }

    static final class Options {
        List<String> algorithms = new ArrayList<>();
        List<Long> starts = new ArrayList<>();
        long rate = 20_000_000;
        long rtt = 40_000_000;
        long bufferBytes;
        double bufferBdp = 1.0;
        double loss;
        long aggBytes;
        long aggNanos;
        List<long[]> rateChanges = new ArrayList<>();
        long bytes = -1;
        long duration = -1;
        int mss = 1200;
        long seed = 1;
        Map<String, Map<String, String>> scopedOptions = new LinkedHashMap<>();
        Map<String, String> globalOptions = new LinkedHashMap<>();
        boolean json;
        boolean compare;
        Path trace;
        boolean help;
    }

    private SimulatorCli() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** Runs the CLI; returns the exit status (0 ok, 1 failure while running, 2 bad usage). */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        Options o;
        try {
            o = parse(args);
        } catch (UsageException | CcConfigException e) {
            err.println("ccsim: " + e.getMessage() + " (see --help)");
            return 2;
        }
        if (o.help) {
            out.println(USAGE);
            return 0;
        }
        try {
            List<SimulationResult> results = new ArrayList<>();
            List<SimulationConfig> configs = o.compare ? compareConfigs(o) : List.of(config(o, o.algorithms, null));
            try (TraceWriter trace = o.trace == null ? null : new TraceWriter(o.trace)) {
                int run = 0;
                for (SimulationConfig c : configs) {
                    SimulationConfig withObserver = trace == null ? c : rebuildWithObserver(o, c, trace.forRun(run));
                    results.add(new Simulator(withObserver).run());
                    run++;
                }
            }
            if (o.json) {
                out.println(o.compare ? compareJson(results) : Json.result(results.get(0)));
            } else {
                out.print(o.compare ? Report.compareTable(o, results) : Report.table(o, results.get(0)));
            }
            return 0;
        } catch (IllegalArgumentException e) {
            err.println("ccsim: " + e.getMessage());
            return 2;
        } catch (UncheckedIOException e) {
            err.println("ccsim: cannot write trace: " + e.getCause().getMessage());
            return 1;
        }
    }

    private static String compareJson(List<SimulationResult> results) {
        StringBuilder sb = new StringBuilder("{\"runs\":[");
        for (int i = 0; i < results.size(); i++) {
            sb.append(i == 0 ? "" : ",").append(Json.result(results.get(i)));
        }
        return sb.append("]}").toString();
    }

    private static List<SimulationConfig> compareConfigs(Options o) {
        List<SimulationConfig> list = new ArrayList<>();
        for (String algorithm : o.algorithms) {
            list.add(config(o, List.of(algorithm), null));
        }
        return list;
    }

    private static SimulationConfig rebuildWithObserver(Options o, SimulationConfig c, SimulationObserver obs) {
        List<String> names = new ArrayList<>();
        for (FlowConfig f : c.flows) {
            names.add(f.algorithm);
        }
        return config(o, names, obs);
    }

    static SimulationConfig config(Options o, List<String> algorithms, SimulationObserver observer) {
        SimulationConfig.Builder b = SimulationConfig.builder()
                .rateBitsPerSecond(o.rate).rttNanos(o.rtt).lossProbability(o.loss).seed(o.seed).mss(o.mss);
        if (o.bufferBytes > 0) {
            b.bufferBytes(o.bufferBytes);
        } else {
            b.bufferBdp(o.bufferBdp);
        }
        if (o.aggBytes > 0) {
            b.ackAggregation(o.aggBytes, o.aggNanos);
        }
        for (long[] rc : o.rateChanges) {
            b.rateChange(rc[0], rc[1]);
        }
        if (o.duration > 0) {
            b.durationNanos(o.duration);
        }
        for (int i = 0; i < algorithms.size(); i++) {
            String name = algorithms.get(i);
            Map<String, String> opts = new LinkedHashMap<>();
            for (Map.Entry<String, String> g : o.globalOptions.entrySet()) {
                if (Algorithms.descriptor(name).options().containsKey(g.getKey())) {
                    opts.put(g.getKey(), g.getValue());
                }
            }
            opts.putAll(o.scopedOptions.getOrDefault(name, Map.of()));
            Algorithms.options(name, opts); // validate now: a clear error before anything runs
            FlowConfig f = FlowConfig.of(name).options(opts);
            int startIndex = o.compare ? 0 : i;
            if (startIndex < o.starts.size()) {
                f = f.startNanos(o.starts.get(startIndex));
            }
            if (o.bytes > 0) {
                f = f.bytes(o.bytes);
            }
            b.flow(f);
        }
        if (observer != null) {
            b.observer(observer);
        }
        return b.build();
    }

    static Options parse(String[] args) {
        Options o = new Options();
        for (int i = 0; i < args.length; i++) {
            String flag = args[i];
            String inline = null;
            int eq = flag.indexOf('=');
            if (flag.startsWith("--") && eq > 0 && !flag.startsWith("--cc-option")) {
                inline = flag.substring(eq + 1);
                flag = flag.substring(0, eq);
            }
            switch (flag) {
                case "--help":
                case "-h":
                    o.help = true;
                    return o;
                case "--json":
                    o.json = true;
                    continue;
                case "--compare":
                    o.compare = true;
                    continue;
                default:
                    break;
            }
            String value = inline;
            if (value == null) {
                if (i + 1 >= args.length) {
                    throw new UsageException(known(flag) ? flag + " needs a value" : "unknown flag " + flag);
                }
                value = args[++i];
            }
            parseValued(o, flag, value);
        }
        if (o.algorithms.isEmpty()) {
            throw new UsageException("--cc is required");
        }
        if (o.bytes < 0 && o.duration < 0) {
            throw new UsageException("give --bytes or --duration");
        }
        if (o.starts.size() > o.algorithms.size()) {
            throw new UsageException("--start has " + o.starts.size() + " offsets for " + o.algorithms.size() + " flows");
        }
        for (String scoped : o.scopedOptions.keySet()) {
            if (!o.algorithms.contains(scoped)) {
                throw new UsageException("--cc-option for " + scoped + ", which is not in --cc");
            }
        }
        for (String key : o.globalOptions.keySet()) {
            boolean anyAccepts = o.algorithms.stream()
                    .anyMatch(a -> Algorithms.descriptor(a).options().containsKey(key));
            if (!anyAccepts) {
                throw new UsageException("--cc-option " + key + " is not an option of " + String.join(", ", o.algorithms));
            }
        }
        return o;
    }

    private static boolean known(String flag) {
        return List.of("--cc", "--start", "--rate", "--rtt", "--buffer", "--loss", "--ack-aggregation",
                "--rate-change", "--bytes", "--duration", "--mss", "--seed", "--cc-option", "--trace").contains(flag);
    }

    private static void parseValued(Options o, String flag, String value) {
        try {
            switch (flag) {
                case "--cc":
                    for (String name : value.split(",")) {
                        String n = name.strip().toLowerCase(Locale.ROOT);
                        Algorithms.descriptor(n); // throws naming the known ones
                        o.algorithms.add(n);
                    }
                    break;
                case "--start":
                    for (String t : value.split(",")) {
                        o.starts.add(Units.parseDurationNanos(t));
                    }
                    break;
                case "--rate":
                    o.rate = positive(Units.parseRateBitsPerSecond(value), flag, value);
                    break;
                case "--rtt":
                    o.rtt = positive(Units.parseDurationNanos(value), flag, value);
                    break;
                case "--buffer":
                    String lower = value.strip().toLowerCase(Locale.ROOT);
                    if (lower.endsWith("bdp")) {
                        o.bufferBdp = Double.parseDouble(lower.substring(0, lower.length() - 3).strip());
                        if (!(o.bufferBdp > 0) || Double.isInfinite(o.bufferBdp)) {
                            throw new UsageException("--buffer " + value + ": BDP multiple must be > 0");
                        }
                        o.bufferBytes = 0;
                    } else {
                        o.bufferBytes = positive(Units.parseBytes(value), flag, value);
                    }
                    break;
                case "--loss":
                    o.loss = Double.parseDouble(value);
                    if (!(o.loss >= 0 && o.loss < 1)) {
                        throw new UsageException("--loss " + value + ": must be in [0, 1), e.g. 0.01 for 1%");
                    }
                    break;
                case "--ack-aggregation":
                    int slash = value.indexOf('/');
                    if (slash < 0) {
                        throw new UsageException("--ack-aggregation " + value + ": expected BYTES/TIME, e.g. 30KiB/10ms");
                    }
                    o.aggBytes = positive(Units.parseBytes(value.substring(0, slash)), flag, value);
                    o.aggNanos = positive(Units.parseDurationNanos(value.substring(slash + 1)), flag, value);
                    break;
                case "--rate-change":
                    int colon = value.indexOf(':');
                    if (colon < 0) {
                        throw new UsageException("--rate-change " + value + ": expected TIME:RATE, e.g. 20s:2mbit");
                    }
                    o.rateChanges.add(new long[] {Units.parseDurationNanos(value.substring(0, colon)),
                        positive(Units.parseRateBitsPerSecond(value.substring(colon + 1)), flag, value)});
                    break;
                case "--bytes":
                    o.bytes = positive(Units.parseBytes(value), flag, value);
                    break;
                case "--duration":
                    o.duration = positive(Units.parseDurationNanos(value), flag, value);
                    break;
                case "--mss":
                    o.mss = Integer.parseInt(value.strip());
                    if (o.mss < 100 || o.mss > 65527) {
                        throw new UsageException("--mss " + value + ": must be in [100, 65527]");
                    }
                    break;
                case "--seed":
                    o.seed = Long.parseLong(value.strip());
                    break;
                case "--cc-option":
                    parseCcOption(o, value);
                    break;
                case "--trace":
                    o.trace = Path.of(value);
                    break;
                default:
                    throw new UsageException("unknown flag " + flag);
            }
        } catch (NumberFormatException e) {
            throw new UsageException(flag + " " + value + ": not a number");
        } catch (CcConfigException e) {
            throw new UsageException(flag + " " + value + ": " + e.getMessage());
        }
    }

    private static void parseCcOption(Options o, String value) {
        int eq = value.indexOf('=');
        if (eq <= 0) {
            throw new UsageException("--cc-option " + value + ": expected KEY=VALUE or ALGO:KEY=VALUE");
        }
        String key = value.substring(0, eq).strip();
        String v = value.substring(eq + 1).strip();
        int colon = key.indexOf(':');
        if (colon > 0) {
            String algo = key.substring(0, colon).strip().toLowerCase(Locale.ROOT);
            Algorithms.descriptor(algo);
            o.scopedOptions.computeIfAbsent(algo, k -> new LinkedHashMap<>()).put(key.substring(colon + 1).strip(), v);
        } else {
            o.globalOptions.put(key, v);
        }
    }

    private static long positive(long v, String flag, String text) {
        if (v <= 0) {
            throw new UsageException(flag + " " + text + ": must be > 0");
        }
        return v;
    }

    /** Writes the CSV time series: one row per flow per sample interval. */
    static final class TraceWriter implements AutoCloseable {
        private final PrintWriter out;

        TraceWriter(Path file) {
            try {
                out = new PrintWriter(Files.newBufferedWriter(file, StandardCharsets.UTF_8));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            out.println("run,time_s,flow,cc,mode,cwnd_bytes,bytes_in_flight,pacing_rate_bps,bandwidth_estimate_bps,"
                    + "min_rtt_ms,srtt_ms,latest_rtt_ms,queue_bytes,packets_lost");
        }

        SimulationObserver forRun(int run) {
            return new SimulationObserver() {
                @Override
                public void onSample(long now, int flow, CcSnapshot s, long queueBytes, long latestRtt) {
                    out.printf(Locale.ROOT, "%d,%.3f,%d,%s,%s,%d,%d,%d,%d,%.3f,%.3f,%.3f,%d,%d%n", run, now / 1e9, flow,
                            s.algorithm, s.mode.label(), s.congestionWindow, s.bytesInFlight, s.pacingRate * 8,
                            s.bandwidthEstimate * 8, s.minRttNanos / 1e6, s.smoothedRttNanos / 1e6, latestRtt / 1e6,
                            queueBytes, s.packetsLost);
                }
            };
        }

        @Override
        public void close() {
            out.flush();
            boolean failed = out.checkError();
            out.close();
            if (failed) {
                throw new UncheckedIOException(new IOException("write failed"));
            }
        }
    }
}
