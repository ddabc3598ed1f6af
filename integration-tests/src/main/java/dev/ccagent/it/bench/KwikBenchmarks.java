package dev.ccagent.it.bench;

import dev.ccagent.agent.report.RecordingReport;
import dev.ccagent.it.BuildTree;
import dev.ccagent.it.emulator.LinkProfile;
import dev.ccagent.it.kwik.SelfSignedKeyStore;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.CombinedDomainXYPlot;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.category.DefaultCategoryDataset;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;

/**
 * The kwik benchmark matrix (issue 6), run outside Maven: one kwik server JVM per configuration
 * (stock NewReno, our newreno / cubic / reno-hbdp / bbr1 / bbr3), all started once and kept for the
 * whole matrix, each recording ccagent's JFR events with CongestionState every 100 ms; per scenario a
 * fresh link emulator and one client JVM per configuration that runs the repetitions one after the
 * other. Then agent overhead on plain loopback (no agent / cc=stock / cc=stock with jfr=). Appends a
 * section to BENCHMARKS.md and writes PNG charts and a CSV of every transfer.
 *
 * <pre>
 * java -cp integration-tests/target/classes:$(cat integration-tests/target/classpath.txt):agent/target/ccagent.jar \
 *      dev.ccagent.it.bench.KwikBenchmarks [--reps 3] [--slow-reps 1] [--scenarios clean,loss1,...]
 *      [--configs stock,newreno,...] [--overhead-reps 3] [--no-overhead] [--out docs/bench] [--markdown BENCHMARKS.md]
 * </pre>
 */
public final class KwikBenchmarks {

    /** A link; {@code rate 0} = plain loopback without the emulator. */
    static final class Scenario {
        final String name;
        final String description;
        final long rate;
        final long rttNanos;
        final double loss;
        final double bufferBdp;
        final long jitterNanos;
        final long burstyNanos;
        final long bytes;
        final boolean slow;

        Scenario(String name, String description, long rate, long rttMs, double loss, double bufferBdp, long jitterMs,
                 long burstyMs, long bytes, boolean slow) {
            this.name = name;
            this.description = description;
            this.rate = rate;
            this.rttNanos = rttMs * 1_000_000L;
            this.loss = loss;
            this.bufferBdp = bufferBdp;
            this.jitterNanos = jitterMs * 1_000_000L;
            this.burstyNanos = burstyMs * 1_000_000L;
            this.bytes = bytes;
            this.slow = slow;
        }

        LinkProfile profile(boolean data) {
            if (rate == 0) {
                return null;
            }
            LinkProfile.Builder b = LinkProfile.builder().rate(rate).bufferBdp(bufferBdp, rttNanos)
                    .delay(data ? rttNanos - rttNanos / 2 : rttNanos / 2);
            if (data) {
                b.loss(loss);
                if (jitterNanos > 0) {
                    b.jitter(jitterNanos);
                }
            } else if (burstyNanos > 0) {
                b.bursty(burstyNanos); // Wi-Fi-like: ACKs delivered in aggregates
            }
            return b.build();
        }
    }

    static final List<Scenario> SCENARIOS = List.of(
            new Scenario("clean", "20 Mbit/s, 40 ms, 1 BDP", 20_000_000, 40, 0, 1, 0, 0, 4_000_000, false),
            new Scenario("loss1", "20 Mbit/s, 50 ms, 1% loss, 1 BDP", 20_000_000, 50, 0.01, 1, 0, 0, 2_000_000, false),
            new Scenario("loss2", "20 Mbit/s, 50 ms, 2% loss, 1 BDP", 20_000_000, 50, 0.02, 1, 0, 0, 2_000_000, true),
            new Scenario("wifi", "20 Mbit/s, 40 ms, 0-8 ms jitter (data), ACKs served every 10 ms (aggregated), 1 BDP",
                    20_000_000, 40, 0, 1, 8, 10, 3_000_000, true),
            new Scenario("shallow", "20 Mbit/s, 40 ms, 0.25 BDP", 20_000_000, 40, 0, 0.25, 0, 0, 3_000_000, true),
            new Scenario("lfn", "20 Mbit/s, 300 ms, 1 BDP (long fat pipe)", 20_000_000, 300, 0, 1, 0, 0, 6_000_000, true),
            new Scenario("loopback", "plain 127.0.0.1, no emulator", 0, 0, 0, 0, 0, 0, 20_000_000, false));

    static final List<String> CONFIGS = List.of("stock", "newreno", "cubic", "reno-hbdp", "bbr1", "bbr3");

    /** One transfer's row. */
    static final class Row {
        String scenario;
        String config;
        int rep;
        long bytes;
        double seconds;
        double mbps;
        boolean ok;
        double rttP50 = Double.NaN;
        double rttP95 = Double.NaN;
        long lostJfr = -1;
        double cpuSeconds = -1;
        String odcid;
    }

    static final class Link {
        long drops;
        long dataPackets;
    }

    int reps = 3;
    int slowReps = 1;
    int overheadReps = 3;
    boolean overhead = true;
    List<String> scenarioNames = new ArrayList<>();
    List<String> configs = new ArrayList<>(CONFIGS);
    Path outDir = Path.of("docs/bench");
    Path markdown = Path.of("BENCHMARKS.md");
    final List<String> loads = new ArrayList<>();
    final long t0 = System.nanoTime();

    public static void main(String[] args) throws Exception {
        KwikBenchmarks b = new KwikBenchmarks();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--reps": b.reps = Integer.parseInt(args[++i]); break;
                case "--slow-reps": b.slowReps = Integer.parseInt(args[++i]); break;
                case "--overhead-reps": b.overheadReps = Integer.parseInt(args[++i]); break;
                case "--no-overhead": b.overhead = false; break;
                case "--scenarios": b.scenarioNames = Arrays.asList(args[++i].split(",")); break;
                case "--configs": b.configs = Arrays.asList(args[++i].split(",")); break;
                case "--out": b.outDir = Path.of(args[++i]); break;
                case "--markdown": b.markdown = Path.of(args[++i]); break;
                default:
                    System.err.println("unknown argument " + args[i]);
                    System.exit(2);
            }
        }
        System.exit(b.run(String.join(" ", args)));
    }

    void progress(String s) {
        System.out.printf(Locale.ROOT, "[%6.1fs] %s%n", (System.nanoTime() - t0) / 1e9, s);
        System.out.flush();
    }

    static String load() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).split(" ");
            return f[0];
        } catch (IOException e) {
            return "?";
        }
    }

    int run(String argLine) throws Exception {
        BuildTree tree = BuildTree.locate();
        Path work = Files.createTempDirectory("ccagent-bench-");
        Files.createDirectories(outDir);
        progress("work directory " + work + "; load " + load());
        Path keyStore = work.resolve("server.p12");
        SelfSignedKeyStore.generate(keyStore);
        Path jfc = work.resolve("bench.jfc");
        try (InputStream in = KwikBenchmarks.class.getClassLoader().getResourceAsStream("dev/ccagent/jfr/ccagent.jfc")) {
            if (in == null) {
                throw new IOException("ccagent.jfc not on the class path (append agent/target/ccagent.jar)");
            }
            String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            // CongestionState every 100 ms instead of 1 s: enough samples for RTT percentiles of short runs
            Files.writeString(jfc, text.replaceFirst("(dev\\.ccagent\\.CongestionState\">\\s*<setting name=\"enabled\">true</setting>\\s*<setting name=\"period\">)1 s",
                    "$1100 ms"));
        }
        List<Scenario> scenarios = new ArrayList<>();
        for (Scenario s : SCENARIOS) {
            if (scenarioNames.isEmpty() || scenarioNames.contains(s.name)) {
                scenarios.add(s);
            }
        }
        List<Row> rows = new ArrayList<>();
        Map<String, Link> links = new LinkedHashMap<>();
        Map<String, String> scenarioLoad = new LinkedHashMap<>();
        Map<String, KwikRun> servers = new LinkedHashMap<>();
        Map<String, Path> jfrs = new LinkedHashMap<>();
        Map<String, Integer> servedCursor = new LinkedHashMap<>();
        Thread cleanup = new Thread(() -> servers.values().forEach(KwikRun::close), "bench-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
        try {
            progress("starting " + configs.size() + " kwik servers: " + configs);
            for (String c : configs) {
                Path jfr = work.resolve(c + ".jfr");
                String args = "cc=" + c + ";fix.kwik-stream-stall=on;log=debug";
                servers.put(c, KwikRun.launch(tree, work, c, keyStore, args, jfr, List.of(
                        "-XX:StartFlightRecording=settings=" + jfc + ",filename=" + jfr + ",dumponexit=true")));
                jfrs.put(c, jfr);
                servedCursor.put(c, 0);
            }
            for (KwikRun s : servers.values()) {
                s.awaitPort(Duration.ofSeconds(120));
            }
            for (Scenario sc : scenarios) {
                int n = sc.slow ? slowReps : reps;
                String before = load();
                progress("scenario " + sc.name + " (" + sc.description + "), " + n + " x " + sc.bytes / 1_000_000.0
                        + " MB per configuration; load " + before);
                for (String c : configs) {
                    KwikRun server = servers.get(c);
                    KwikRun.Outcome o = server.run(tree, sc.profile(false), sc.profile(true), 7, sc.bytes, n, 1,
                            Duration.ofSeconds(600), List.of());
                    server.assignArms(o);
                    List<Double> cpu = servedCpu(server, servedCursor, c);
                    Link l = new Link();
                    l.drops = o.down.getOrDefault("droppedRandom", 0L) + o.down.getOrDefault("droppedQueue", 0L);
                    l.dataPackets = o.down.getOrDefault("packetsIn", 0L);
                    links.put(sc.name + "/" + c, l);
                    int rep = 0;
                    for (KwikRun.Transfer t : o.transfers) {
                        Row r = new Row();
                        r.scenario = sc.name;
                        r.config = c;
                        r.rep = rep;
                        r.bytes = t.bytes;
                        r.seconds = t.seconds;
                        r.mbps = t.mbps;
                        r.ok = t.ok;
                        r.odcid = t.odcid;
                        r.cpuSeconds = rep < cpu.size() ? cpu.get(rep) : -1;
                        rows.add(r);
                        rep++;
                    }
                    progress(String.format(Locale.ROOT, "  %-9s %s", c, o.transfers.stream()
                            .map(t -> String.format(Locale.ROOT, "%.2f Mbit/s%s", t.mbps, t.ok ? "" : " FAILED"))
                            .reduce((a, b) -> a + ", " + b).orElse("no result (client exit " + o.clientExit + ")")));
                }
                scenarioLoad.put(sc.name, before + " → " + load());
            }
        } finally {
            progress("stopping the servers (JFR recordings are written at exit)");
            for (Map.Entry<String, KwikRun> e : servers.entrySet()) {
                KwikRun.Outcome dummy = new KwikRun.Outcome();
                e.getValue().finish(dummy);
            }
        }
        // RTT and losses per transfer from the JFR CongestionState events of its connection
        Map<String, RecordingReport> reports = new LinkedHashMap<>();
        for (Map.Entry<String, Path> e : jfrs.entrySet()) {
            if (Files.isRegularFile(e.getValue()) && Files.size(e.getValue()) > 0) {
                reports.put(e.getKey(), RecordingReport.read(e.getValue()));
            }
        }
        for (Row r : rows) {
            RecordingReport rep = reports.get(r.config);
            if (rep == null) {
                continue;
            }
            for (RecordingReport.Connection c : rep.connections()) {
                if (c.id.equals(r.odcid)) {
                    long[] rtt = c.samples().stream().mapToLong(s -> s.smoothedRttNanos).filter(v -> v > 0).sorted().toArray();
                    if (rtt.length > 0) {
                        r.rttP50 = rtt[(int) Math.min(rtt.length - 1, Math.round(0.50 * (rtt.length - 1)))] / 1e6;
                        r.rttP95 = rtt[(int) Math.min(rtt.length - 1, Math.round(0.95 * (rtt.length - 1)))] / 1e6;
                    }
                    if (!c.samples().isEmpty() && !r.config.equals("stock")) {
                        r.lostJfr = c.samples().get(c.samples().size() - 1).packetsLost;
                    }
                }
            }
        }
        writeCsv(rows);
        String stamp = LocalDateTime.now().withNano(0).toString();
        StringBuilder md = new StringBuilder();
        md.append("\n## kwik benchmark matrix (").append(stamp).append(")\n\n");
        md.append("Command (after `mvn -B -q install -DskipTests`):\n\n```bash\n")
                .append("java -cp integration-tests/target/classes:$(cat integration-tests/target/classpath.txt):agent/target/ccagent.jar \\\n")
                .append("     dev.ccagent.it.bench.KwikBenchmarks ").append(argLine).append("\n```\n\n");
        md.append(machineNotes()).append("\n");
        md.append("One kwik 0.10.9 server JVM per configuration (`stock` = kwik's own NewReno with `cc=stock`; the others "
                + "our algorithm injected with `cc=NAME`; every server runs `fix.kwik-stream-stall=on` and records ccagent's "
                + "JFR events with CongestionState every 100 ms), started once for the whole matrix; per scenario and "
                + "configuration one client JVM downloading the repetitions one after the other through a fresh link "
                + "emulator (loss on the data direction only). Goodput = bytes / client-measured time from the request "
                + "to the last byte. Utilisation = goodput / link rate. RTT = smoothed RTT of the connection's CongestionState "
                + "samples (ours only: kwik's stock controller exposes none). Lost = packets our controller declared lost "
                + "(JFR); drops = what the emulator dropped in the data direction (random + queue), all repetitions. CPU = "
                + "server process CPU during the transfer per MB. Median of the repetitions, spread = min–max.\n\n");
        for (Scenario sc : scenarios) {
            md.append(table(sc, rows, links, scenarioLoad.get(sc.name)));
        }
        Path goodputPng = outDir.resolve("kwik-goodput.png");
        goodputChart(scenarios, rows, goodputPng);
        md.append("![goodput per scenario](").append(markdown.toAbsolutePath().getParent().relativize(goodputPng.toAbsolutePath()))
                .append(")\n\n");
        Path seriesPng = outDir.resolve("kwik-timeseries.png");
        String series = timeSeriesChart(reports, rows, seriesPng);
        if (series != null) {
            md.append(series).append("\n\n![cwnd, pacing rate and RTT over time](")
                    .append(markdown.toAbsolutePath().getParent().relativize(seriesPng.toAbsolutePath())).append(")\n\n");
        }
        md.append("Every transfer: `").append(markdown.toAbsolutePath().getParent().relativize(outDir.resolve("kwik-matrix.csv")
                .toAbsolutePath())).append("`.\n");
        if (overhead) {
            md.append(overhead(tree, work, keyStore));
        }
        Files.writeString(markdown, md.toString(), StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.CREATE,
                java.nio.file.StandardOpenOption.APPEND);
        System.out.println(md);
        progress("appended to " + markdown + "; work files in " + work);
        return rows.stream().allMatch(r -> r.ok) ? 0 : 1;
    }

    List<Double> servedCpu(KwikRun server, Map<String, Integer> cursor, String key) {
        List<Double> all = new ArrayList<>();
        for (String line : server.server().stdout().split("\n")) {
            Matcher m = KwikRun.SERVED.matcher(line);
            if (m.find()) {
                all.add(Long.parseLong(m.group(4)) / 1e9);
            }
        }
        int from = cursor.get(key);
        cursor.put(key, all.size());
        return new ArrayList<>(all.subList(Math.min(from, all.size()), all.size()));
    }

    static double median(List<Double> v) {
        if (v.isEmpty()) {
            return Double.NaN;
        }
        List<Double> s = new ArrayList<>(v);
        s.sort(Double::compare);
        int n = s.size();
        return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
    }

    static List<Double> of(List<Row> rows, java.util.function.ToDoubleFunction<Row> f) {
        List<Double> out = new ArrayList<>();
        for (Row r : rows) {
            double v = f.applyAsDouble(r);
            if (!Double.isNaN(v) && v >= 0) {
                out.add(v);
            }
        }
        return out;
    }

    String table(Scenario sc, List<Row> rows, Map<String, Link> links, String load) {
        StringBuilder sb = new StringBuilder();
        sb.append("### ").append(sc.name).append(": ").append(sc.description).append("\n\n");
        sb.append(sc.bytes / 1_000_000.0).append(" MB per download; load average during the scenario: ").append(load)
                .append("\n\n");
        sb.append("| config | n | goodput Mbit/s (spread) | time s | utilisation | RTT p50 / p95 ms | lost (JFR) | drops | CPU s/MB | vs stock |\n");
        sb.append("|---|---|---|---|---|---|---|---|---|---|\n");
        double stock = median(of(select(rows, sc.name, "stock"), r -> r.ok ? r.mbps : Double.NaN));
        for (String c : configs) {
            List<Row> rs = select(rows, sc.name, c);
            if (rs.isEmpty()) {
                continue;
            }
            List<Double> g = of(rs, r -> r.ok ? r.mbps : Double.NaN);
            double med = median(g);
            long failed = rs.stream().filter(r -> !r.ok).count();
            Link l = links.get(sc.name + "/" + c);
            sb.append(String.format(Locale.ROOT, "| %s | %d%s | %.2f (%.2f–%.2f) | %.2f | %s | %s | %s | %s | %s | %s |\n",
                    c, rs.size(), failed > 0 ? " (" + failed + " failed)" : "", med,
                    g.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN),
                    g.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN),
                    median(of(rs, r -> r.ok ? r.seconds : Double.NaN)),
                    sc.rate > 0 ? String.format(Locale.ROOT, "%.0f%%", 100 * med * 1e6 / sc.rate) : "-",
                    Double.isNaN(median(of(rs, r -> r.rttP50))) ? "-" : String.format(Locale.ROOT, "%.0f / %.0f",
                            median(of(rs, r -> r.rttP50)), median(of(rs, r -> r.rttP95))),
                    c.equals("stock") ? "-" : String.format(Locale.ROOT, "%.0f", median(of(rs, r -> r.lostJfr))),
                    sc.rate > 0 && l != null ? Long.toString(l.drops) : "-",
                    String.format(Locale.ROOT, "%.3f", median(of(rs, r -> r.cpuSeconds > 0 ? r.cpuSeconds / (r.bytes / 1e6) : Double.NaN))),
                    stock > 0 ? String.format(Locale.ROOT, "%.2fx", med / stock) : "-"));
        }
        sb.append("\n");
        return sb.toString();
    }

    static List<Row> select(List<Row> rows, String scenario, String config) {
        List<Row> out = new ArrayList<>();
        for (Row r : rows) {
            if (r.scenario.equals(scenario) && r.config.equals(config)) {
                out.add(r);
            }
        }
        return out;
    }

    void writeCsv(List<Row> rows) throws IOException {
        StringBuilder sb = new StringBuilder("scenario,config,rep,bytes,seconds,mbps,ok,rtt_p50_ms,rtt_p95_ms,lost_jfr,server_cpu_s,odcid\n");
        for (Row r : rows) {
            sb.append(String.format(Locale.ROOT, "%s,%s,%d,%d,%.3f,%.2f,%s,%.1f,%.1f,%d,%.3f,%s%n", r.scenario, r.config,
                    r.rep, r.bytes, r.seconds, r.mbps, r.ok, r.rttP50, r.rttP95, r.lostJfr, r.cpuSeconds, r.odcid));
        }
        Files.writeString(outDir.resolve("kwik-matrix.csv"), sb.toString());
    }

    void goodputChart(List<Scenario> scenarios, List<Row> rows, Path png) throws IOException {
        DefaultCategoryDataset ds = new DefaultCategoryDataset();
        for (Scenario sc : scenarios) {
            if (sc.rate == 0) {
                continue; // loopback is an order of magnitude above the emulated links: its own table
            }
            for (String c : configs) {
                double m = median(of(select(rows, sc.name, c), r -> r.ok ? r.mbps : Double.NaN));
                ds.addValue(Double.isNaN(m) ? 0 : m, c, sc.name);
            }
        }
        JFreeChart chart = ChartFactory.createBarChart("kwik download goodput per scenario (median; link 20 Mbit/s)",
                "scenario", "goodput, Mbit/s", ds, PlotOrientation.VERTICAL, true, false, false);
        ChartUtils.saveChartAsPNG(png.toFile(), chart, 1000, 500);
    }

    /** cwnd, pacing rate and RTT of the first loss1 (else clean) transfer of bbr1 and of newreno. */
    String timeSeriesChart(Map<String, RecordingReport> reports, List<Row> rows, Path png) throws IOException {
        String scenario = rows.stream().anyMatch(r -> r.scenario.equals("loss1")) ? "loss1" : "clean";
        XYSeriesCollection cwnd = new XYSeriesCollection();
        XYSeriesCollection pacing = new XYSeriesCollection();
        XYSeriesCollection rtt = new XYSeriesCollection();
        List<String> used = new ArrayList<>();
        for (String c : List.of("bbr1", "newreno")) {
            List<Row> rs = select(rows, scenario, c);
            RecordingReport rep = reports.get(c);
            if (rs.isEmpty() || rep == null) {
                continue;
            }
            Row r = rs.get(0);
            for (RecordingReport.Connection conn : rep.connections()) {
                if (!conn.id.equals(r.odcid) || conn.samples().isEmpty()) {
                    continue;
                }
                XYSeries w = new XYSeries(c);
                XYSeries p = new XYSeries(c);
                XYSeries t = new XYSeries(c);
                java.time.Instant start = conn.samples().get(0).time;
                for (RecordingReport.Sample s : conn.samples()) {
                    double x = Duration.between(start, s.time).toNanos() / 1e9;
                    w.add(x, s.congestionWindow / 1e3);
                    p.add(x, s.pacingRate * 8 / 1e6);
                    if (s.smoothedRttNanos > 0) {
                        t.add(x, s.smoothedRttNanos / 1e6);
                    }
                }
                cwnd.addSeries(w);
                pacing.addSeries(p);
                rtt.addSeries(t);
                used.add(String.format(Locale.ROOT, "%s (%s, %.2f Mbit/s, %d samples)", c, r.odcid, r.mbps,
                        conn.samples().size()));
            }
        }
        if (used.isEmpty()) {
            return null;
        }
        CombinedDomainXYPlot plot = new CombinedDomainXYPlot(new NumberAxis("seconds since the connection's first sample"));
        XYPlot first = new XYPlot(cwnd, null, new NumberAxis("cwnd, kB"), renderer(cwnd));
        plot.add(first);
        plot.add(new XYPlot(pacing, null, new NumberAxis("pacing rate, Mbit/s"), renderer(pacing)));
        plot.add(new XYPlot(rtt, null, new NumberAxis("smoothed RTT, ms"), renderer(rtt)));
        plot.setFixedLegendItems(first.getLegendItems());
        JFreeChart chart = new JFreeChart("kwik + bbr1 vs kwik + newreno, scenario " + scenario
                + " (JFR CongestionState, 100 ms)", JFreeChart.DEFAULT_TITLE_FONT, plot, true);
        ChartUtils.saveChartAsPNG(png.toFile(), chart, 1000, 800);
        return "Time series (first " + scenario + " repetition): " + String.join("; ", used) + ".";
    }

    /** The same colour for the same algorithm in every subplot. */
    static XYLineAndShapeRenderer renderer(XYSeriesCollection c) {
        XYLineAndShapeRenderer r = new XYLineAndShapeRenderer(true, false);
        for (int i = 0; i < c.getSeriesCount(); i++) {
            r.setSeriesPaint(i, c.getSeriesKey(i).toString().startsWith("bbr") ? java.awt.Color.RED : java.awt.Color.BLUE);
        }
        return r;
    }

    String machineNotes() {
        StringBuilder sb = new StringBuilder();
        sb.append("Machine: ").append(Runtime.getRuntime().availableProcessors()).append(" CPUs (`nproc`), ")
                .append(System.getProperty("java.vm.name")).append(" ").append(System.getProperty("java.runtime.version"))
                .append(", ").append(System.getProperty("os.name")).append(" ").append(System.getProperty("os.version"))
                .append("; shared with other engineers' builds and tests while this ran (load averages per scenario "
                        + "below: on 2 CPUs anything above 2 means the JVMs here waited for CPU).\n");
        return sb.toString();
    }

    /** Agent overhead on plain loopback: no agent, cc=stock (detection on), cc=stock with jfr=. */
    String overhead(BuildTree tree, Path work, Path keyStore) throws Exception {
        long bytes = 10_000_000;
        String[][] variants = {
            {"no agent", null},
            {"agent, cc=stock (detection on)", "cc=stock;fix.kwik-stream-stall=on"},
            {"agent, cc=stock + jfr=", "cc=stock;fix.kwik-stream-stall=on;jfr=" + work.resolve("overhead.jfr")},
        };
        progress("overhead: " + overheadReps + " x " + bytes / 1e6 + " MB on loopback per variant, interleaved; load " + load());
        String before = load();
        Map<String, List<Double>> mbps = new LinkedHashMap<>();
        Map<String, List<Double>> cpu = new LinkedHashMap<>();
        Map<String, KwikRun> servers = new LinkedHashMap<>();
        Map<String, Integer> cursor = new LinkedHashMap<>();
        Map<String, Integer> stalls = new LinkedHashMap<>();
        try {
            for (String[] v : variants) {
                servers.put(v[0], KwikRun.launch(tree, work, "ovh-" + (v[1] == null ? "none" : v[1].contains("jfr") ? "jfr" : "stock"),
                        keyStore, v[1], null, List.of()));
                mbps.put(v[0], new ArrayList<>());
                cpu.put(v[0], new ArrayList<>());
                cursor.put(v[0], 0);
            }
            for (KwikRun s : servers.values()) {
                s.awaitPort(Duration.ofSeconds(120));
            }
            for (int rep = 0; rep < overheadReps; rep++) {
                for (String[] v : variants) {
                    KwikRun s = servers.get(v[0]);
                    // the server without the agent has no stall fix: a frozen transfer is retried (and not counted)
                    KwikRun.Outcome o = s.run(tree, null, null, 11 + rep, bytes, 1, 1, Duration.ofSeconds(300),
                            List.of("--stall-seconds", "5", "--stall-retries", "6"));
                    List<Double> c = servedCpu(s, cursor, v[0]);
                    for (String line : o.clientOutput.split("\n")) {
                        if (line.startsWith("STALL ")) {
                            stalls.merge(v[0], 1, Integer::sum);
                        }
                    }
                    for (KwikRun.Transfer t : o.transfers) {
                        if (t.ok) {
                            mbps.get(v[0]).add(t.mbps);
                        }
                    }
                    for (double x : c) {
                        if (x > 0) {
                            cpu.get(v[0]).add(x / (bytes / 1e6));
                        }
                    }
                    progress(String.format(Locale.ROOT, "  %-32s %s", v[0], o.transfers.isEmpty() ? "no result"
                            : String.format(Locale.ROOT, "%.1f Mbit/s", o.transfers.get(o.transfers.size() - 1).mbps)));
                }
            }
        } finally {
            for (KwikRun s : servers.values()) {
                s.finish(new KwikRun.Outcome());
            }
        }
        StringBuilder sb = new StringBuilder();
        sb.append("\n### Agent overhead on plain loopback\n\n");
        sb.append(overheadReps).append(" × 10 MB download per variant, variants interleaved, each on its own server JVM; "
                + "load average ").append(before).append(" → ").append(load()).append(".\n\n");
        sb.append("Without the agent kwik has no stall fix: a download that froze for 5 s (kwik's stream-stall bug, see the "
                + "README) was aborted and retried on a new connection, up to 6 times; frozen attempts are not counted. "
                + "Stalled attempts in this run: ").append(stalls).append(".\n\n");
        sb.append("| variant | n | max throughput Mbit/s (median, spread) | server CPU s/MB (median) | throughput vs no agent | CPU/MB vs no agent |\n");
        sb.append("|---|---|---|---|---|---|\n");
        double base = median(mbps.get(variants[0][0]));
        double baseCpu = median(cpu.get(variants[0][0]));
        for (String[] v : variants) {
            List<Double> m = mbps.get(v[0]);
            double med = median(m);
            double c = median(cpu.get(v[0]));
            sb.append(String.format(Locale.ROOT, "| %s | %d | %.1f (%.1f–%.1f) | %.4f | %.3f | %.3f |\n", v[0], m.size(), med,
                    m.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN),
                    m.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN), c, med / base, c / baseCpu));
        }
        return sb.toString();
    }
}
