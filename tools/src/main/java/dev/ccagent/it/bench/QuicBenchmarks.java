package dev.ccagent.it.bench;

import dev.ccagent.report.RecordingReport;
import dev.ccagent.it.BuildTree;
import dev.ccagent.it.DebianTool;
import dev.ccagent.it.LoadAverage;
import dev.ccagent.it.emulator.LinkEmulator;
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
import java.net.InetSocketAddress;
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
import java.util.stream.Collectors;

/**
 * The benchmark matrix (issue 6), run outside Maven, on both stacks, a real HTTP/3 server on kwik and a peer
 * implementation side by side.
 *
 * <ul>
 *   <li><b>kwik</b>: one kwik server JVM per configuration (stock NewReno, our newreno / cubic /
 *       reno-hbdp / bbr1 / bbr3), started once and kept for the whole matrix, each recording
 *       ccagent's JFR events with CongestionState every 100 ms; per scenario a fresh link emulator
 *       in this JVM and one client JVM per configuration that first warms up with a download
 *       straight from the server, then runs the measured repetitions one after the other.</li>
 *   <li><b>Netty QUIC</b> (quiche): per scenario and configuration one forked {@code NettyBulkApp}
 *       (server, client and emulator in one JVM) with the agent choosing quiche's algorithm and,
 *       for the paced configuration, pacing; a warm-up transfer first, path stats every 100 ms.</li>
 *   <li><b>HTTP/3 servers</b>, one per configuration, kept for the whole matrix, each downloaded from by a
 *       fresh ngtcp2 example client per transfer ({@link Ngtcp2Client}) through the same emulator as kwik's:
 *       Flupke's sample server on kwik with the agent ({@link FlupkeSampleServer}, {@code flupke/*}) and the
 *       peer, ngtcp2's example server with one of its congestion controllers ({@link Ngtcp2Peer},
 *       {@code ngtcp2/*}); the figures from outside the servers (client log, JFR or qlog, /proc).</li>
 * </ul>
 * Warm-ups go through a fast emulated link (100 Mbit/s, 10 ms) that still shapes, so that the
 * pacers are compiled too; before the matrix, one such transfer JIT-compiles this JVM's emulator:
 * cold JVMs on a 2-core machine spend most of a short transfer compiling, which delays the
 * sender's wake-ups and made BBR leave STARTUP at a fraction of the link rate. Then agent overhead
 * on plain loopback (no agent / cc=stock / cc=stock with jfr=). Appends a section to BENCHMARKS.md
 * and writes PNG charts and a CSV of every transfer.
 *
 * <pre>
 * java -cp tools/target/classes:$(cat tools/target/classpath.txt):agent/target/ccagent.jar \
 *      dev.ccagent.it.bench.QuicBenchmarks [--reps 3] [--slow-reps 2] [--scenarios clean,loss1,...]
 *      [--configs kwik,netty,ngtcp2 | kwik/stock,kwik/bbr1,netty/bbr+pacing,ngtcp2/bbr2,...] [--overhead-reps 10] [--no-overhead]
 *      [--out docs/bench] [--markdown BENCHMARKS.md]
 * </pre>
 */
public final class QuicBenchmarks {

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

        Scenario withBytes(long n) {
            return new Scenario(name, description, rate, rttNanos / 1_000_000, loss, bufferBdp, jitterNanos / 1_000_000,
                    burstyNanos / 1_000_000, n, slow);
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
            new Scenario("clean", "20 Mbit/s, 40 ms, 1 BDP", 20_000_000, 40, 0, 1, 0, 0, 10_000_000, false),
            new Scenario("loss1", "20 Mbit/s, 50 ms, 1% loss, 1 BDP", 20_000_000, 50, 0.01, 1, 0, 0, 5_000_000, false),
            new Scenario("loss1-50", "50 Mbit/s, 50 ms, 1% loss, 1 BDP", 50_000_000, 50, 0.01, 1, 0, 0, 6_000_000, true),
            new Scenario("loss2", "20 Mbit/s, 50 ms, 2% loss, 1 BDP", 20_000_000, 50, 0.02, 1, 0, 0, 4_000_000, true),
            new Scenario("wifi", "20 Mbit/s, 40 ms, 0-8 ms jitter (data), ACKs served every 10 ms (aggregated), 1 BDP",
                    20_000_000, 40, 0, 1, 8, 10, 6_000_000, true),
            new Scenario("ackburst", "20 Mbit/s, 40 ms, ACKs released in 20 ms bursts, 2 BDP (issue 36's aggregated-ACK link)",
                    20_000_000, 40, 0, 2, 0, 20, 6_000_000, true),
            new Scenario("shallow", "20 Mbit/s, 40 ms, 0.25 BDP", 20_000_000, 40, 0, 0.25, 0, 0, 6_000_000, true),
            new Scenario("lfn", "20 Mbit/s, 300 ms, 1 BDP (long fat pipe)", 20_000_000, 300, 0, 1, 0, 0, 12_000_000, true),
            new Scenario("loopback", "plain 127.0.0.1, no emulator", 0, 0, 0, 0, 0, 0, 50_000_000, false));

    /** One column of the matrix: a stack and what the agent makes it run. */
    record Config(String name, String agentArgs, boolean stock, String description) {
        /** The stack, the name's part before its '/' ("kwik", "netty", "flupke", "ngtcp2"). */
        String stack() {
            return name.substring(0, name.indexOf('/'));
        }

        String fileName() {
            return name.replace('/', '-').replace('+', '-');
        }
    }

    static final List<Config> CONFIGS = withHttp3Configs(List.of(
            new Config("kwik/stock", "cc=stock", true, "kwik's own NewReno (the agent only observes)"),
            new Config("kwik/newreno", "cc=newreno", false, "our NewReno injected"),
            new Config("kwik/cubic", "cc=cubic", false, "our CUBIC injected"),
            new Config("kwik/reno-hbdp", "cc=reno-hbdp", false, "our high-BDP Reno injected"),
            new Config("kwik/bbr1", "cc=bbr1", false, "our BBRv1 injected"),
            new Config("kwik/bbr1-drain", "cc=bbr1;opt.bbr1.drain-to-target=on", false,
                    "our BBRv1 with drain-to-target (PROBE_BW's 0.75 gain until in flight <= BDP)"),
            new Config("kwik/bbr3", "cc=bbr3", false, "our BBRv3 injected"),
            new Config("kwik/bbr3-no-a0", "cc=bbr3;opt.bbr3.overestimate-avoidance=off", false,
                    "our BBRv3 without the sampler's overestimate avoidance (its rate samples before 2026-12-08)"),
            new Config("netty/cubic", "netty.cc=stock", true, "quiche's default CUBIC, unpaced (stock Netty)"),
            new Config("netty/reno", "netty.cc=reno", false, "quiche Reno chosen by the agent, unpaced"),
            new Config("netty/bbr", "netty.cc=bbr", false, "quiche BBR (bbr2_gcongestion) chosen by the agent, unpaced"),
            new Config("netty/bbr+pacing", "netty.cc=bbr;netty.pacing=on", false,
                    "quiche BBR with the agent's pacing of quiche's send times")));

    /**
     * {@code kwikAndNetty} followed by the HTTP/3 rows: Flupke's sample server with the agent's {@code cc=} for
     * each of stock, cubic, bbr1, bbr3; then the peer, ngtcp2's example server with each of its own controllers
     * (0.12: cubic, its default, reno, bbr = BBRv1, bbr2 = BBRv2).
     */
    static List<Config> withHttp3Configs(List<Config> kwikAndNetty) {
        List<Config> out = new ArrayList<>(kwikAndNetty);
        for (String cc : List.of("stock", "cubic", "bbr1", "bbr3")) {
            out.add(new Config("flupke/" + cc, "cc=" + cc, cc.equals("stock"), cc.equals("stock")
                    ? "Flupke 0.6's sample HTTP/3 server on kwik 0.10.9, kwik's own NewReno (the agent only observes)"
                    : "the same server, our `" + cc + "` injected"));
        }
        out.add(new Config("flupke/bbr3-no-a0", "cc=bbr3;opt.bbr3.overestimate-avoidance=off", false,
                "the same server, our `bbr3` without the sampler's overestimate avoidance (before 2026-12-08)"));
        Map<String, String> ngtcp2 = new LinkedHashMap<>();
        ngtcp2.put("cubic", "its default CUBIC");
        ngtcp2.put("reno", "Reno");
        ngtcp2.put("bbr", "BBR (v1 in ngtcp2 0.12)");
        ngtcp2.put("bbr2", "BBRv2");
        ngtcp2.forEach((cc, what) -> out.add(new Config("ngtcp2/" + cc, "--cc=" + cc, cc.equals("cubic"),
                "peer: ngtcp2's example server, " + what)));
        return List.copyOf(out);
    }

    static final long KWIK_WARMUP_BYTES = 20_000_000;
    /** RTT samples from this long after a connection's first one count as steady state. */
    static final long STEADY_AFTER_MILLIS = 1500;

    /**
     * The warm-ups' link, 100 Mbit/s and 10 ms RTT with 2 BDP of buffer (the same as NettyBulkApp's):
     * fast, but shaped, so that the pacers and the emulator's timing queue are compiled too.
     */
    static LinkProfile warmupLink() {
        return LinkProfile.builder().rate(100_000_000).delay(5_000_000).bufferBdp(2, 10_000_000).build();
    }
    static final long NETTY_WARMUP_BYTES = 20_000_000;
    static final long EMULATOR_WARMUP_BYTES = 30_000_000;

    /** One transfer's row. */
    static final class Row {
        final String scenario;
        final String config;
        final int rep;
        long bytes;
        double seconds;
        double mbps;
        boolean ok;
        double rttP50 = Double.NaN;
        double rttP95 = Double.NaN;
        double rttP95Steady = Double.NaN;
        long lostJfr = -1;
        double cpuSeconds = -1;
        String odcid;
        /** The recording this transfer's samples are in (kwik: its server's; Netty: its run's). */
        RecordingReport report;

        Row(String scenario, String config, int rep) {
            this.scenario = scenario;
            this.config = config;
            this.rep = rep;
        }
    }

    /** The emulator's data direction over all repetitions of one configuration in one scenario. */
    static final class Link {
        long drops;
        /** Bytes the emulator delivered to the client: headers, retransmissions and the handshake included. */
        long wireBytes;
        /** Queueing delay at the emulator's bottleneck (data direction), median and p95, µs; -1 unknown. */
        long queueP50Micros = -1;
        long queueP95Micros = -1;

        /** From the emulator's server → client counters. */
        static Link of(Map<String, Long> down) {
            Link l = new Link();
            l.drops = down.getOrDefault("droppedRandom", 0L) + down.getOrDefault("droppedQueue", 0L);
            l.wireBytes = down.getOrDefault("bytesOut", 0L);
            l.queueP50Micros = down.getOrDefault("queueDelayP50Micros", -1L);
            l.queueP95Micros = down.getOrDefault("queueDelayP95Micros", -1L);
            return l;
        }

        String queue() {
            return queueP50Micros < 0 ? "-" : String.format(Locale.ROOT, "%.1f / %.1f", queueP50Micros / 1e3, queueP95Micros / 1e3);
        }
    }

    int reps = 3;
    int slowReps = 2;
    int overheadReps = 10;
    boolean overhead = true;
    boolean matrix = true;
    /** When positive, every selected scenario downloads this many bytes instead of its own size. */
    long bytesOverride;
    /**
     * Per overhead download. kwik without the agent has no stall fix, and the faster a warm JVM
     * downloads, the more often kwik's race freezes a transfer: 30 MB stalled on almost every attempt.
     */
    long overheadBytes = 10_000_000;
    List<String> scenarioNames = new ArrayList<>();
    List<Config> configs = new ArrayList<>(CONFIGS);
    Path outDir = Path.of("docs/bench");
    Path markdown = Path.of("BENCHMARKS.md");
    final List<String> loads = new ArrayList<>();
    final long t0 = System.nanoTime();

    public static void main(String[] args) throws Exception {
        QuicBenchmarks b = new QuicBenchmarks();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--reps": b.reps = Integer.parseInt(args[++i]); break;
                case "--slow-reps": b.slowReps = Integer.parseInt(args[++i]); break;
                case "--overhead-reps": b.overheadReps = Integer.parseInt(args[++i]); break;
                case "--no-overhead": b.overhead = false; break;
                case "--overhead-only": b.matrix = false; break;
                case "--bytes": b.bytesOverride = Long.parseLong(args[++i]); break;
                case "--overhead-bytes": b.overheadBytes = Long.parseLong(args[++i]); break;
                case "--scenarios": b.scenarioNames = Arrays.asList(args[++i].split(",")); break;
                case "--configs": b.configs = selectConfigs(args[++i]); break;
                case "--out": b.outDir = Path.of(args[++i]); break;
                case "--markdown": b.markdown = Path.of(args[++i]); break;
                default:
                    System.err.println("unknown argument " + args[i]);
                    System.exit(2);
            }
        }
        System.exit(b.run(String.join(" ", args)));
    }

    /** Configurations by name ({@code kwik/bbr1}) or by stack ({@code kwik}, {@code netty}, {@code ngtcp2}). */
    static List<Config> selectConfigs(String list) {
        List<Config> out = new ArrayList<>();
        for (String want : list.split(",")) {
            boolean found = false;
            for (Config c : CONFIGS) {
                if ((c.name.equals(want) || c.stack().equals(want)) && !out.contains(c)) {
                    out.add(c);
                    found = true;
                }
            }
            if (!found) {
                System.err.println("unknown configuration '" + want + "'; known: kwik, netty, flupke, ngtcp2, "
                        + CONFIGS.stream().map(c -> c.name).reduce((a, b) -> a + ", " + b).orElse(""));
                System.exit(2);
            }
        }
        return out;
    }

    void progress(String s) {
        System.out.printf(Locale.ROOT, "[%6.1fs] %s%n", (System.nanoTime() - t0) / 1e9, s);
        System.out.flush();
    }

    static String load() {
        return LoadAverage.oneMinute();
    }

    /** The command line the markdown names (run from the repository root). */
    static String command(String argLine) {
        return "java -cp tools/target/classes:$(cat tools/target/classpath.txt):agent/target/ccagent.jar \\\n"
                + "     dev.ccagent.it.bench.QuicBenchmarks " + argLine + "\n";
    }

    /** The state of one benchmark matrix run, filled step by step by {@link #run}. */
    static final class MatrixRun {
        final List<Scenario> scenarios;
        final List<Row> rows = new ArrayList<>();
        final Map<String, Link> links = new LinkedHashMap<>();
        final Map<String, String> scenarioLoad = new LinkedHashMap<>();
        final Map<String, KwikRun> servers = new LinkedHashMap<>();
        /** The HTTP/3 servers by configuration ({@code flupke/*}, {@code ngtcp2/*}), their client and document root. */
        final Map<String, Ngtcp2Peer> peers = new LinkedHashMap<>();
        final Map<String, FlupkeSampleServer> flupkes = new LinkedHashMap<>();
        DebianTool http3Client;
        Path http3Files;
        final Map<String, Path> jfrs = new LinkedHashMap<>();
        final Map<String, Integer> servedCursor = new LinkedHashMap<>();

        MatrixRun(List<Scenario> scenarios) {
            this.scenarios = scenarios;
        }
    }

    int run(String argLine) throws Exception {
        BuildTree tree = BuildTree.locate();
        Path work = Files.createTempDirectory("ccagent-bench-");
        Files.createDirectories(outDir);
        progress("work directory " + work + "; load " + load());
        Path keyStore = work.resolve("server.p12");
        SelfSignedKeyStore.generate(keyStore);
        if (!matrix) {
            return overheadOnly(tree, work, keyStore, argLine);
        }
        String storePass = new String(SelfSignedKeyStore.PASSWORD);
        Path jfc = writeRecordingSettings(work);
        MatrixRun m = new MatrixRun(selectedScenarios());
        Thread cleanup = new Thread(() -> {
            m.servers.values().forEach(KwikRun::close);
            m.peers.values().forEach(Ngtcp2Peer::destroy);
            m.flupkes.values().forEach(FlupkeSampleServer::close);
        }, "bench-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
        try {
            startKwikServers(tree, work, keyStore, jfc, m);
            startHttp3Servers(tree, work, jfc, m);
            warmUpEmulator(tree, work, m);
            runScenarios(tree, work, keyStore, storePass, jfc, m);
            addPeerFigures(m);
        } finally {
            stopKwikServers(m);
            stopHttp3Servers(m);
        }
        addRecordedFigures(m.rows, readRecordings(m.jfrs));
        writeCsv(m.rows);
        appendToMarkdown(matrixMarkdown(argLine, m) + (overhead ? overhead(tree, work, keyStore) : ""));
        progress("appended to " + markdown + "; work files in " + work);
        return m.rows.stream().allMatch(r -> r.ok) ? 0 : 1;
    }

    /** {@code --overhead-only}: the agent-overhead section alone, appended to the markdown. */
    int overheadOnly(BuildTree tree, Path work, Path keyStore, String argLine) throws Exception {
        String md = "\n## Agent overhead (" + LocalDateTime.now().withNano(0) + ")\n\nCommand:\n\n```bash\n"
                + command(argLine) + "```\n\n" + machineNotes()
                + overhead(tree, work, keyStore);
        Files.writeString(markdown, md, StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.CREATE,
                java.nio.file.StandardOpenOption.APPEND);
        System.out.println(md);
        return 0;
    }

    /** The agent's JFR settings with CongestionState every 100 ms instead of 1 s, as {@code work/bench.jfc}. */
    static Path writeRecordingSettings(Path work) throws IOException {
        Path jfc = work.resolve("bench.jfc");
        try (InputStream in = QuicBenchmarks.class.getClassLoader().getResourceAsStream("dev/ccagent/jfr/ccagent.jfc")) {
            if (in == null) {
                throw new IOException("ccagent.jfc not on the class path (append agent/target/ccagent.jar)");
            }
            String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            // CongestionState every 100 ms instead of 1 s: enough samples for RTT percentiles of short runs
            Files.writeString(jfc, text.replaceFirst("(dev\\.ccagent\\.CongestionState\">\\s*<setting name=\"enabled\">true</setting>\\s*<setting name=\"period\">)1 s",
                    "$1100 ms"));
        }
        return jfc;
    }

    /** The scenarios {@code --scenarios} names (all without it), each with {@code --bytes} when given. */
    List<Scenario> selectedScenarios() {
        List<Scenario> scenarios = new ArrayList<>();
        for (Scenario s : SCENARIOS) {
            if (scenarioNames.isEmpty() || scenarioNames.contains(s.name)) {
                scenarios.add(bytesOverride > 0 ? s.withBytes(bytesOverride) : s);
            }
        }
        return scenarios;
    }

    /** One recorded kwik server per kwik configuration, all up before the first scenario. */
    void startKwikServers(BuildTree tree, Path work, Path keyStore, Path jfc, MatrixRun m) throws Exception {
        List<Config> kwik = configs.stream().filter(c -> c.stack().equals("kwik")).collect(Collectors.toList());
        progress("starting " + kwik.size() + " kwik servers: " + kwik.stream().map(c -> c.name).collect(Collectors.toList()));
        for (Config c : kwik) {
            Path jfr = work.resolve(c.fileName() + ".jfr");
            String args = c.agentArgs + ";fix.kwik-stream-stall=on;log=debug";
            m.servers.put(c.name, KwikRun.launch(tree, work, c.fileName(), keyStore, args, jfr, List.of(
                    "-XX:StartFlightRecording=settings=" + jfc + ",filename=" + jfr + ",dumponexit=true")));
            m.jfrs.put(c.name, jfr);
            m.servedCursor.put(c.name, 0);
        }
        for (KwikRun s : m.servers.values()) {
            s.awaitPort(Duration.ofSeconds(120));
        }
    }

    /**
     * The HTTP/3 servers, one per {@code flupke/*} and {@code ngtcp2/*} configuration, all up before the first
     * scenario, serving one document root; ngtcp2's client and server are Debian's programs, fetched into
     * {@code tools/target/debian-tools} when they are not installed ({@link DebianTool}); a self-signed RSA
     * certificate (the form both servers read).
     */
    void startHttp3Servers(BuildTree tree, Path work, Path jfc, MatrixRun m) throws Exception {
        List<Config> http3 = configs.stream().filter(c -> c.stack().equals("ngtcp2") || c.stack().equals("flupke"))
                .collect(Collectors.toList());
        if (http3.isEmpty()) {
            return;
        }
        Path tools = tree.root().resolve("tools").resolve("target").resolve("debian-tools");
        m.http3Client = DebianTool.find(Ngtcp2Client.PROGRAM, "ngtcp2-client", tools);
        m.http3Files = Files.createDirectories(work.resolve("http3-www"));
        Path[] pem = SelfSignedKeyStore.generateRsaPem(Files.createDirectories(work.resolve("http3-cert")));
        progress("HTTP/3 servers " + http3.stream().map(c -> c.name).collect(Collectors.toList()) + "; client "
                + m.http3Client);
        DebianTool server = null;
        for (Config c : http3) {
            if (c.stack().equals("ngtcp2")) {
                if (server == null) {
                    server = DebianTool.find(Ngtcp2Peer.SERVER, "ngtcp2-server", tools);
                    progress("ngtcp2's server " + server);
                }
                m.peers.put(c.name, Ngtcp2Peer.start(server, work, c.fileName(), c.agentArgs.substring("--cc=".length()),
                        m.http3Files, pem));
            } else {
                Path jfr = work.resolve(c.fileName() + ".jfr");
                m.flupkes.put(c.name, FlupkeSampleServer.start(tree, work, c.fileName(),
                        c.agentArgs + ";fix.kwik-stream-stall=on", m.http3Files, pem, List.of(
                                "-XX:StartFlightRecording=settings=" + jfc + ",filename=" + jfr + ",dumponexit=true")));
                m.jfrs.put(c.name, jfr);
            }
        }
    }

    /** The file of {@code bytes} random bytes the HTTP/3 servers serve, written on first use. */
    static String http3File(MatrixRun m, long bytes) throws IOException {
        String name = "f" + bytes + ".bin";
        Path f = m.http3Files.resolve(name);
        if (!Files.exists(f)) {
            java.util.Random rnd = new java.util.Random(bytes);
            byte[] buf = new byte[1 << 16];
            try (java.io.OutputStream out = Files.newOutputStream(f)) {
                for (long left = bytes; left > 0; left -= buf.length) {
                    rnd.nextBytes(buf);
                    out.write(buf, 0, (int) Math.min(buf.length, left));
                }
            }
        }
        return name;
    }

    /** JIT-compiles this JVM's link emulator (every scenario's transfers pass through it). */
    void warmUpEmulator(BuildTree tree, Path work, MatrixRun m) throws Exception {
        if (m.servers.isEmpty()) {
            if (!m.peers.isEmpty() || !m.flupkes.isEmpty()) {
                String name = !m.peers.isEmpty() ? m.peers.keySet().iterator().next() : m.flupkes.keySet().iterator().next();
                Ngtcp2Client.Transfer t = http3Download(work, m, name, warmupLink(), EMULATOR_WARMUP_BYTES, "warmup");
                progress(String.format(Locale.ROOT, "emulator warm-up (%s): %.1f Mbit/s%s", name, t.mbps(),
                        t.ok ? "" : " FAILED: " + t.error));
            }
            return;
        }
        Map.Entry<String, KwikRun> firstEntry = m.servers.entrySet().iterator().next();
        KwikRun first = firstEntry.getValue();
        KwikRun.Outcome w = first.run(tree, warmupLink(), warmupLink(), 3,
                EMULATOR_WARMUP_BYTES, 1, 1, Duration.ofSeconds(300), List.of());
        progress("emulator warm-up: " + w.transfers.stream().map(t -> t.mbps + " Mbit/s").collect(Collectors.toList()));
        servedCpu(first, m.servedCursor, firstEntry.getKey(), 0);
    }

    /** Every scenario with every configuration, its rows into {@code m}; the load before and after each. */
    void runScenarios(BuildTree tree, Path work, Path keyStore, String storePass, Path jfc, MatrixRun m)
            throws Exception {
        for (Scenario sc : m.scenarios) {
            int n = sc.slow ? slowReps : reps;
            String before = load();
            progress("scenario " + sc.name + " (" + sc.description + "), " + n + " x " + sc.bytes / 1_000_000.0
                    + " MB per configuration; load " + before);
            for (Config c : configs) {
                List<Row> measured = switch (c.stack()) {
                    case "kwik" -> kwikScenario(tree, sc, c, n, m.servers.get(c.name), m.servedCursor, m.links);
                    case "ngtcp2", "flupke" -> http3Scenario(work, sc, c, n, m);
                    default -> nettyScenario(tree, work, keyStore, storePass, jfc, sc, c, n, m.links, m.jfrs);
                };
                m.rows.addAll(measured);
                progress(String.format(Locale.ROOT, "  %-17s %s", c.name, measured.stream()
                        .map(r -> String.format(Locale.ROOT, "%.2f Mbit/s%s", r.mbps, r.ok ? "" : " FAILED"))
                        .reduce((a, b) -> a + ", " + b).orElse("no result")));
            }
            m.scenarioLoad.put(sc.name, before + " → " + load());
        }
    }

    /**
     * The peer's RTT and losses per transfer from its server's qlog of that connection (read once every transfer
     * is over: ngtcp2 completes a connection's qlog when the connection ends, after its draining period).
     */
    void addPeerFigures(MatrixRun m) throws IOException, InterruptedException {
        if (m.peers.isEmpty()) {
            return;
        }
        Thread.sleep(3000); // the last connection's draining period (3 PTO)
        for (Row r : m.rows) {
            Ngtcp2Peer p = m.peers.get(r.config);
            if (p == null || !r.ok) {
                continue;
            }
            Ngtcp2Peer.Qlog q = p.qlog(r.odcid);
            if (q == null) {
                continue;
            }
            setRtt(r, q.rttEvery100Ms.stream().mapToLong(v -> Math.round(v * 1e6)).toArray(),
                    q.rttSteady.stream().mapToLong(v -> Math.round(v * 1e6)).toArray());
            r.lostJfr = q.packetsLost;
        }
    }

    /** Stops the HTTP/3 servers (the Flupke servers' recordings are written as they exit). */
    void stopHttp3Servers(MatrixRun m) throws InterruptedException {
        for (Ngtcp2Peer p : m.peers.values()) {
            p.close();
        }
        for (FlupkeSampleServer f : m.flupkes.values()) {
            f.close();
        }
    }

    /** Stops the kwik servers; their JFR recordings are written as they exit. */
    void stopKwikServers(MatrixRun m) throws InterruptedException {
        progress("stopping the kwik servers (JFR recordings are written at exit)");
        for (Map.Entry<String, KwikRun> e : m.servers.entrySet()) {
            KwikRun.Outcome dummy = new KwikRun.Outcome();
            e.getValue().finish(dummy);
        }
    }

    /** The recordings that were written (not empty), by configuration (kwik) or configuration@scenario (Netty). */
    static Map<String, RecordingReport> readRecordings(Map<String, Path> jfrs) throws IOException {
        Map<String, RecordingReport> reports = new LinkedHashMap<>();
        for (Map.Entry<String, Path> e : jfrs.entrySet()) {
            if (Files.isRegularFile(e.getValue()) && Files.size(e.getValue()) > 0) {
                reports.put(e.getKey(), RecordingReport.read(e.getValue()));
            }
        }
        return reports;
    }

    /** RTT and losses per transfer from the JFR CongestionState events of its connection. */
    static void addRecordedFigures(List<Row> rows, Map<String, RecordingReport> reports) {
        for (Row r : rows) {
            RecordingReport rep = reports.get(r.config.startsWith("netty/") ? r.config + "@" + r.scenario : r.config);
            if (rep == null) {
                continue;
            }
            for (RecordingReport.Connection c : rep.connections()) {
                if (c.id.equals(r.odcid)) {
                    long[] rtt = c.samples().stream().mapToLong(s -> s.smoothedRttNanos).filter(v -> v > 0).toArray();
                    long[] steady = new long[0];
                    if (!c.samples().isEmpty()) {
                        // the same without start-up (STARTUP and DRAIN, slow start): samples from 1.5 s on
                        java.time.Instant from = c.samples().get(0).time.plusMillis(STEADY_AFTER_MILLIS);
                        steady = c.samples().stream().filter(s -> !s.time.isBefore(from))
                                .mapToLong(s -> s.smoothedRttNanos).filter(v -> v > 0).toArray();
                    }
                    setRtt(r, rtt, steady);
                    if (!c.samples().isEmpty() && !r.config.endsWith("/stock")) {
                        r.lostJfr = c.samples().get(c.samples().size() - 1).packetsLost;
                    }
                    r.report = rep;
                }
            }
        }
    }

    /** The matrix section: command, machine, method, configurations, a table per scenario, the charts. */
    String matrixMarkdown(String argLine, MatrixRun m) throws IOException {
        String stamp = LocalDateTime.now().withNano(0).toString();
        StringBuilder md = new StringBuilder();
        md.append("\n## Benchmark matrix: ").append(configs.stream().map(Config::stack).distinct()
                .collect(Collectors.joining(", "))).append(" (").append(stamp).append(")\n\n");
        md.append("Command (after `mvn -B -q install -DskipTests`):\n\n```bash\n")
                .append(command(argLine)).append("```\n\n");
        md.append(machineNotes()).append("\n");
        md.append(method()).append("\n");
        md.append("Configurations:\n\n");
        for (Config c : configs) {
            md.append("- `").append(c.name).append("`: ").append(c.description)
                    .append(c.stack().equals("ngtcp2") ? " (server: `" : " (agent: `").append(c.agentArgs).append("`)\n");
        }
        md.append("\n");
        for (Scenario sc : m.scenarios) {
            md.append(table(sc, m.rows, m.links, m.scenarioLoad.get(sc.name)));
        }
        Path goodputPng = outDir.resolve("goodput.png");
        goodputChart(m.scenarios, m.rows, goodputPng);
        md.append("![goodput per scenario](").append(markdown.toAbsolutePath().getParent().relativize(goodputPng.toAbsolutePath()))
                .append(")\n\n");
        Path seriesPng = outDir.resolve("timeseries.png");
        String series = timeSeriesChart(m.rows, seriesPng);
        if (series != null) {
            md.append(series).append("\n\n![cwnd, pacing rate and RTT over time](")
                    .append(markdown.toAbsolutePath().getParent().relativize(seriesPng.toAbsolutePath())).append(")\n\n");
        }
        md.append("Every transfer: `").append(markdown.toAbsolutePath().getParent().relativize(outDir.resolve("matrix.csv")
                .toAbsolutePath())).append("`.\n");
        return md.toString();
    }

    /** Appends {@code md} to the markdown file and prints it. */
    void appendToMarkdown(String md) throws IOException {
        Files.writeString(markdown, md, StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.CREATE,
                java.nio.file.StandardOpenOption.APPEND);
        System.out.println(md);
    }

    /** One kwik configuration in one scenario: a client JVM (warm-up first) through a fresh emulator. */
    List<Row> kwikScenario(BuildTree tree, Scenario sc, Config c, int n, KwikRun server, Map<String, Integer> cursor,
                           Map<String, Link> links) throws IOException, InterruptedException {
        int serverPort = server.awaitPort(Duration.ofSeconds(10));
        KwikRun.Outcome o;
        try (LinkEmulator fast = LinkEmulator.start(new InetSocketAddress("127.0.0.1", serverPort), warmupLink(),
                warmupLink(), 1)) {
            o = server.run(tree, sc.profile(false), sc.profile(true), 7, sc.bytes, n, 1, Duration.ofSeconds(900),
                    List.of("--warmup-port", Integer.toString(fast.port()), "--warmup-bytes",
                            Long.toString(KWIK_WARMUP_BYTES)));
        }
        List<Double> cpu = servedCpu(server, cursor, c.name, o.transfers.size());
        links.put(sc.name + "/" + c.name, Link.of(o.down));
        List<Row> out = new ArrayList<>();
        int rep = 0;
        for (KwikRun.Transfer t : o.transfers) {
            Row r = new Row(sc.name, c.name, rep);
            r.bytes = t.bytes;
            r.seconds = t.seconds;
            r.mbps = t.mbps;
            r.ok = t.ok;
            r.odcid = t.odcid;
            r.cpuSeconds = rep < cpu.size() ? cpu.get(rep) : -1;
            out.add(r);
            rep++;
        }
        return out;
    }

    /**
     * One HTTP/3 server configuration in one scenario: for a server on a JIT a warm-up download through the fast
     * link, then a fresh link emulator in front of the server and the repetitions, each a fresh ngtcp2 client.
     */
    List<Row> http3Scenario(Path work, Scenario sc, Config c, int n, MatrixRun m) throws IOException, InterruptedException {
        if (c.stack().equals("flupke")) {
            Ngtcp2Client.Transfer w = http3Download(work, m, c.name, warmupLink(), KWIK_WARMUP_BYTES, "warmup");
            if (!w.ok) {
                progress("  " + c.name + " warm-up failed: " + w.error);
            }
        }
        String file = http3File(m, sc.bytes);
        List<Row> out = new ArrayList<>();
        int port = http3Port(m, c.name);
        LinkEmulator em = sc.rate > 0 ? LinkEmulator.start(new InetSocketAddress("127.0.0.1", port), sc.profile(false),
                sc.profile(true), 7) : null;
        try {
            for (int rep = 0; rep < n; rep++) {
                Ngtcp2Client.Transfer t = Ngtcp2Client.download(m.http3Client, em != null ? em.port() : port, file,
                        m.http3Files.resolve(file), work, c.fileName() + "-" + sc.name + "-" + rep, http3Pid(m, c.name),
                        c.stack().equals("flupke"));
                Row r = new Row(sc.name, c.name, rep);
                r.bytes = t.bytes;
                r.seconds = t.seconds;
                r.mbps = t.mbps();
                r.ok = t.ok;
                // our recording names a connection by its original destination id; ngtcp2's qlog by its own id
                r.odcid = c.stack().equals("flupke") ? t.odcid : t.serverCid;
                r.cpuSeconds = t.cpuSeconds;
                if (!t.ok) {
                    progress("  " + c.name + " repetition " + rep + " failed: " + t.error);
                }
                out.add(r);
            }
            if (em != null) {
                m.links.put(sc.name + "/" + c.name, Link.of(em.toClientStats()));
            }
        } finally {
            if (em != null) {
                em.close();
            }
        }
        return out;
    }

    /** One download of {@code bytes} from the HTTP/3 server of configuration {@code name} through {@code link}. */
    Ngtcp2Client.Transfer http3Download(Path work, MatrixRun m, String name, LinkProfile link, long bytes, String tag)
            throws IOException, InterruptedException {
        String file = http3File(m, bytes);
        try (LinkEmulator em = LinkEmulator.start(new InetSocketAddress("127.0.0.1", http3Port(m, name)), link, link, 1)) {
            return Ngtcp2Client.download(m.http3Client, em.port(), file, m.http3Files.resolve(file), work,
                    name.replace('/', '-') + "-" + tag, http3Pid(m, name), name.startsWith("flupke/"));
        }
    }

    static int http3Port(MatrixRun m, String name) {
        return m.peers.containsKey(name) ? m.peers.get(name).port() : m.flupkes.get(name).port;
    }

    static long http3Pid(MatrixRun m, String name) {
        return m.peers.containsKey(name) ? m.peers.get(name).server().pid() : m.flupkes.get(name).jvm.pid();
    }

    /** One Netty configuration in one scenario: a forked NettyBulkApp (warm-up first) with its own recording. */
    List<Row> nettyScenario(BuildTree tree, Path work, Path keyStore, String storePass, Path jfc, Scenario sc, Config c,
                            int n, Map<String, Link> links, Map<String, Path> jfrs) throws IOException, InterruptedException {
        String link = null;
        if (sc.rate > 0) {
            link = String.format(Locale.ROOT, "%d,%d,%s,%s,%d,%d", sc.rate, sc.rttNanos / 2_000_000, sc.bufferBdp, sc.loss,
                    sc.jitterNanos / 1_000_000, sc.burstyNanos / 1_000_000);
        }
        Path jfr = work.resolve(c.fileName() + "-" + sc.name + ".jfr");
        NettyRun.Outcome o = NettyRun.run(tree, work, c.fileName() + "-" + sc.name, keyStore, storePass,
                c.agentArgs + ";netty.stats.period=100ms", jfc, jfr, link, sc.bytes, n, NETTY_WARMUP_BYTES,
                Duration.ofSeconds(900));
        jfrs.put(c.name + "@" + sc.name, jfr);
        links.put(sc.name + "/" + c.name, Link.of(o.down));
        List<Row> out = new ArrayList<>();
        for (NettyRun.Transfer t : o.transfers) {
            Row r = new Row(sc.name, c.name, t.index);
            r.bytes = t.bytes;
            r.seconds = t.seconds;
            r.mbps = t.mbps;
            r.ok = t.ok;
            r.odcid = t.scid;
            r.cpuSeconds = t.processCpuSeconds;
            out.add(r);
        }
        if (o.transfers.size() < n) {
            progress("  " + c.name + ": " + o.transfers.size() + " of " + n + " transfers reported (exit " + o.exit + ")"
                    + o.stdout.lines().filter(x -> x.startsWith("FAILED")).findFirst().map(x -> ": " + x).orElse(""));
            for (int i = o.transfers.size(); i < n; i++) {
                out.add(new Row(sc.name, c.name, i)); // not ok
            }
        }
        return out;
    }

    /**
     * The CPU figures of the transfers the server served since the last call; the last {@code count}
     * of them are the measured ones (a client's warm-up download comes first).
     */
    List<Double> servedCpu(KwikRun server, Map<String, Integer> cursor, String key, int count) {
        List<Double> all = new ArrayList<>();
        for (String line : server.server().stdout().split("\n")) {
            Matcher m = KwikRun.SERVED.matcher(line);
            if (m.find()) {
                all.add(Long.parseLong(m.group(4)) / 1e9);
            }
        }
        int from = cursor.getOrDefault(key, 0);
        cursor.put(key, all.size());
        List<Double> fresh = new ArrayList<>(all.subList(Math.min(from, all.size()), all.size()));
        return new ArrayList<>(fresh.subList(Math.max(0, fresh.size() - count), fresh.size()));
    }

    /**
     * A transfer's RTT columns from its smoothed-RTT samples in nanoseconds (unsorted): p50 and p95 of all, and p95
     * of those {@code steady} ones (from {@link #STEADY_AFTER_MILLIS} on) when there are at least 5.
     */
    static void setRtt(Row r, long[] all, long[] steady) {
        Arrays.sort(all);
        Arrays.sort(steady);
        if (all.length > 0) {
            r.rttP50 = percentile(all, 0.50);
            r.rttP95 = percentile(all, 0.95);
        }
        if (steady.length >= 5) {
            r.rttP95Steady = percentile(steady, 0.95);
        }
    }

    /** The {@code q} quantile of sorted nanosecond values, in milliseconds. */
    static double percentile(long[] sorted, double q) {
        return sorted[(int) Math.min(sorted.length - 1, Math.round(q * (sorted.length - 1)))] / 1e6;
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
        sb.append("| config | n | goodput Mbit/s (spread) | time s | utilisation | link busy | RTT p50 / p95 (p95 after 1.5 s) ms "
                + "| queue p50 / p95 ms (emulator) | lost (JFR; qlog) | drops | CPU s/MB | vs stock of its stack |\n");
        sb.append("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (Config c : configs) {
            List<Row> rs = select(rows, sc.name, c.name);
            if (rs.isEmpty()) {
                continue;
            }
            double stock = configs.stream().filter(x -> x.stock && x.stack().equals(c.stack())).findFirst()
                    .map(x -> median(of(select(rows, sc.name, x.name), r -> r.ok ? r.mbps : Double.NaN))).orElse(Double.NaN);
            List<Double> g = of(rs, r -> r.ok ? r.mbps : Double.NaN);
            double med = median(g);
            long failed = rs.stream().filter(r -> !r.ok).count();
            Link l = links.get(sc.name + "/" + c.name);
            double cpu = median(of(rs, r -> r.ok && r.cpuSeconds > 0 ? r.cpuSeconds / (r.bytes / 1e6) : Double.NaN));
            double allSeconds = rs.stream().filter(r -> r.ok).mapToDouble(r -> r.seconds).sum();
            String busy = sc.rate > 0 && l != null && l.wireBytes > 0 && allSeconds > 0
                    ? String.format(Locale.ROOT, "%.0f%%", 100 * l.wireBytes * 8 / (sc.rate * allSeconds)) : "-";
            sb.append(String.format(Locale.ROOT, "| %s | %d%s | %.2f (%.2f–%.2f) | %.2f | %s | %s | %s | %s | %s | %s | %s | %s |\n",
                    c.name, rs.size(), failed > 0 ? " (" + failed + " failed)" : "", med,
                    g.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN),
                    g.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN),
                    median(of(rs, r -> r.ok ? r.seconds : Double.NaN)),
                    sc.rate > 0 ? String.format(Locale.ROOT, "%.0f%%", 100 * med * 1e6 / sc.rate) : "-", busy,
                    Double.isNaN(median(of(rs, r -> r.rttP50))) ? "-" : String.format(Locale.ROOT, "%.0f / %.0f (%s)",
                            median(of(rs, r -> r.rttP50)), median(of(rs, r -> r.rttP95)),
                            Double.isNaN(median(of(rs, r -> r.rttP95Steady))) ? "-"
                                    : String.format(Locale.ROOT, "%.0f", median(of(rs, r -> r.rttP95Steady)))),
                    sc.rate > 0 && l != null ? l.queue() : "-",
                    Double.isNaN(median(of(rs, r -> r.lostJfr))) ? "-" : String.format(Locale.ROOT, "%.0f",
                            median(of(rs, r -> r.lostJfr))),
                    sc.rate > 0 && l != null ? Long.toString(l.drops) : "-",
                    Double.isNaN(cpu) ? "-" : String.format(Locale.ROOT, "%.3f%s", cpu,
                            c.stack().equals("netty") ? "†" : c.stack().equals("ngtcp2") ? "‡" : c.stack().equals("flupke") ? "*" : ""),
                    c.stock ? "1.00x" : stock > 0 ? String.format(Locale.ROOT, "%.2fx", med / stock) : "-"));
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
        // cpu_s: kwik = the server process during the transfer; Netty = the whole JVM (both ends and the emulator)
        StringBuilder sb = new StringBuilder("scenario,config,rep,bytes,seconds,mbps,ok,rtt_p50_ms,rtt_p95_ms,"
                + "rtt_p95_after_1.5s_ms,lost_jfr,cpu_s,connection_id\n");
        for (Row r : rows) {
            sb.append(String.format(Locale.ROOT, "%s,%s,%d,%d,%.3f,%.2f,%s,%.1f,%.1f,%.1f,%d,%.3f,%s%n", r.scenario,
                    r.config, r.rep, r.bytes, r.seconds, r.mbps, r.ok, r.rttP50, r.rttP95, r.rttP95Steady, r.lostJfr,
                    r.cpuSeconds, r.odcid));
        }
        Files.writeString(outDir.resolve("matrix.csv"), sb.toString());
    }

    void goodputChart(List<Scenario> scenarios, List<Row> rows, Path png) throws IOException {
        DefaultCategoryDataset ds = new DefaultCategoryDataset();
        for (Scenario sc : scenarios) {
            if (sc.rate == 0) {
                continue; // loopback is an order of magnitude above the emulated links: its own table
            }
            for (Config c : configs) {
                double m = median(of(select(rows, sc.name, c.name), r -> r.ok ? r.mbps : Double.NaN));
                ds.addValue(Double.isNaN(m) ? 0 : m, c.name, sc.name);
            }
        }
        JFreeChart chart = ChartFactory.createBarChart("download goodput per scenario and configuration (median of the repetitions)",
                "scenario", "goodput, Mbit/s", ds, PlotOrientation.VERTICAL, true, false, false);
        ChartUtils.saveChartAsPNG(png.toFile(), chart, 1200, 550);
    }

    /** cwnd, pacing rate and RTT of the first loss1 (else clean) transfer of kwik + bbr1 and kwik + newreno. */
    String timeSeriesChart(List<Row> rows, Path png) throws IOException {
        String scenario = rows.stream().anyMatch(r -> r.scenario.equals("loss1")) ? "loss1" : "clean";
        XYSeriesCollection cwnd = new XYSeriesCollection();
        XYSeriesCollection pacing = new XYSeriesCollection();
        XYSeriesCollection rtt = new XYSeriesCollection();
        List<String> used = new ArrayList<>();
        for (String c : List.of("kwik/bbr1", "kwik/newreno")) {
            List<Row> rs = select(rows, scenario, c);
            if (rs.isEmpty() || rs.get(0).report == null) {
                continue;
            }
            Row r = rs.get(0);
            RecordingReport rep = r.report;
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
            r.setSeriesPaint(i, c.getSeriesKey(i).toString().contains("bbr") ? java.awt.Color.RED : java.awt.Color.BLUE);
        }
        return r;
    }

    String machineNotes() {
        StringBuilder sb = new StringBuilder();
        sb.append("Machine: ").append(Runtime.getRuntime().availableProcessors()).append(" CPUs (`nproc`), ")
                .append(System.getProperty("java.vm.name")).append(" ").append(System.getProperty("java.runtime.version"))
                .append(", ").append(System.getProperty("os.name")).append(" ").append(System.getProperty("os.version"))
                .append(". Load averages per scenario are below: on 2 CPUs anything above 2 means the JVMs here "
                        + "waited for CPU.\n");
        return sb.toString();
    }

    static String method() {
        return "kwik 0.10.9: one server JVM per configuration (`kwik/stock` = kwik's own NewReno with `cc=stock`; the "
                + "others our algorithm injected with `cc=NAME`; every server runs `fix.kwik-stream-stall=on` and records "
                + "ccagent's JFR events with CongestionState every 100 ms), started once for the whole matrix; per scenario "
                + "and configuration one client JVM that first downloads " + KWIK_WARMUP_BYTES / 1_000_000 + " MB through a "
                + "fast emulated link (100 Mbit/s, 10 ms; warm-up, not counted), then the repetitions one after the other through a fresh link "
                + "emulator (loss and jitter on the data direction only). Netty 4.2.17 QUIC (quiche): per scenario and "
                + "configuration one JVM with server, client and emulator, the agent choosing quiche's algorithm "
                + "(`netty.cc=`, `netty/cubic` = quiche's default, untouched) and for `netty/bbr+pacing` pacing datagrams at "
                + "quiche's send times (`netty.pacing=on`); path stats every 100 ms into the same JFR event; a "
                + NETTY_WARMUP_BYTES / 1_000_000 + " MB warm-up through the same fast link first. Before anything, one "
                + EMULATOR_WARMUP_BYTES / 1_000_000 + " MB transfer through it warms this JVM's emulator. HTTP/3 "
                + "servers, each downloaded from by a fresh ngtcp2 0.12 example client (`gtlsclient`, C, Debian's "
                + "`ngtcp2-client`) per repetition through the same kind of fresh emulator, so that they differ by the "
                + "server alone: `flupke/*` = Flupke 0.6's own sample file server on kwik 0.10.9 with the agent "
                + "(`cc=NAME;fix.kwik-stream-stall=on`, the same recording as kwik's), a " + KWIK_WARMUP_BYTES / 1_000_000
                + " MB warm-up download through the fast link per scenario; `ngtcp2/*` = the peer, ngtcp2 0.12's example "
                + "server (`gtlsserver`, C, Debian's `ngtcp2-server`) with `--cc=NAME`, nothing of ours in it. Both "
                + "programs are fetched into `tools/target/debian-tools` (`apt-get download`) when not installed. Each "
                + "server is started once for the whole matrix; the time from the client's debug log (its request frame "
                + "to nghttp3's close of the stream, millisecond stamps), every file's SHA-256 checked.\n\n"
                + "Goodput = bytes / client-measured time from the request to the last byte (the handshake is before it). "
                + "Utilisation = goodput / link rate. Link busy = what the emulator delivered to the client (QUIC and UDP "
                + "headers, retransmissions and the handshake included) / (link rate × the transfers' time). RTT = smoothed RTT of the connection's CongestionState "
                + "samples, all of them and (in brackets) those "
                + "from 1.5 s after the first, without start-up (kwik's "
                + "stock controller exposes none; for Netty it is quiche's; for ngtcp2 its server's qlog "
                + "`recovery:metrics_updated`, the value in force every 100 ms). Lost = packets the controller declared lost "
                + "(our controllers on kwik, quiche on Netty, JFR; ngtcp2's qlog `recovery:packet_lost`); drops = what the emulator dropped in the data direction "
                + "(random + queue), all repetitions; queue = how long each admitted datagram waited in the emulator's "
                + "bottleneck queue (0.1 ms buckets), median and p95 over all repetitions: the standing queue a sender keeps."
                + " CPU s/MB: kwik = the server process during the transfer; † Netty = "
                + "the whole JVM (server, client and emulator), so the two stacks' CPU columns do not compare with each "
                + "other; * Flupke = the server JVM less its JIT compiler threads, ‡ ngtcp2 = its C server process (both /proc, 10 ms ticks). Median of the repetitions, spread = min–max; the ratio is against the stock configuration of the "
                + "same stack in the same run.\n";
    }

    /** Agent overhead on plain loopback: no agent, cc=stock (detection on), cc=stock with jfr=. */
    String overhead(BuildTree tree, Path work, Path keyStore) throws Exception {
        long bytes = overheadBytes;
        String[][] variants = {
            {"no agent", null},
            {"agent, cc=stock, detect=off (stall fix; still measured: measure=on)", "cc=stock;detect=off;fix.kwik-stream-stall=on"},
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
                servers.put(v[0], KwikRun.launch(tree, work, "ovh-" + (v[1] == null ? "none" : v[1].contains("jfr") ? "jfr"
                        : v[1].contains("detect=off") ? "fix-only" : "stock"),
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
                    // the client JVM warms up first (its JIT would otherwise bound what it can receive)
                    KwikRun.Outcome o = s.run(tree, null, null, 11 + rep, bytes, 1, 1, Duration.ofSeconds(300),
                            List.of("--stall-seconds", "5", "--stall-retries", "6", "--warmup-port",
                                    Integer.toString(s.awaitPort(Duration.ofSeconds(10))), "--warmup-bytes",
                                    Long.toString(bytes)));
                    List<Double> c = servedCpu(s, cursor, v[0], 1);
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
        sb.append(overheadReps).append(" × ").append(bytes / 1_000_000).append(" MB download per variant (each client JVM "
                + "first downloads as much, not counted), variants interleaved, each on its own "
                + "server JVM; load average ").append(before).append(" → ").append(load()).append(".\n\n");
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
