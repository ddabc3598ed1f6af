package dev.ccagent.it.demo;

import dev.ccagent.report.FleetHtml;
import dev.ccagent.report.FleetOutput;
import dev.ccagent.report.FleetReport;
import dev.ccagent.report.RecordingReport;
import dev.ccagent.report.stats.Comparison;
import dev.ccagent.cc.Units;
import dev.ccagent.it.BuildTree;
import dev.ccagent.it.bench.KwikRun;
import dev.ccagent.it.emulator.LinkProfile;
import dev.ccagent.it.kwik.SelfSignedKeyStore;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code java -jar agent/target/ccagent.jar demo}: the same kwik download through the link emulator
 * with kwik's stock NewReno, with BBR injected by the agent, and with a canary split; JFR recorded,
 * results side by side, and the canary report's verdicts and HTML page (the page {@code ccagent.jar report
 * --html} writes). Launched by DemoLauncher with this module's run-time class path (the report module's
 * classes among it); the kwik JVMs it forks get kwik and the agent only.
 *
 * <p>Exit status 0 when every transfer was intact, 1 when one failed, 2 on bad flags.
 */
public final class Demo {

    static final String USAGE = String.join("\n",
            "usage: java -jar tools/target/ccagent-demo.jar [--rate 20mbit] [--rtt 50ms] [--loss 0.01]",
            "         [--buffer 1bdp] [--bytes 4MB] [--cc bbr1] [--canary bbr1:50%] [--canary-connections 40]",
            "         [--canary-bytes 500KB] [--canary-parallel 4] [--seed 1] [--out DIR] [--quick] [--agent-jar agent/target/ccagent.jar]",
            "  --loss applies to the data direction (server -> client); --quick: small transfers for a fast check");

    long rate = 20_000_000;
    long rttNanos = 50_000_000;
    double loss = 0.01;
    double bufferBdp = 1.0;
    long bufferBytes = -1;
    long bytes = 4_000_000;
    String cc = "bbr1";
    String canary = "bbr1:50%";
    /**
     * Many short downloads rather than a few long ones: the report compares arms per connection and
     * gives a verdict only with {@link Comparison#MIN_PER_ARM} connections or more in each arm.
     */
    int canaryConnections = 40;
    long canaryBytes = 500_000;
    /**
     * Canary downloads at a time: few, so that a cold client JVM on a small machine keeps up (a sender
     * that wakes late makes BBR measure the CPU instead of the link; 8 at a time gave a bimodal bbr1 arm).
     */
    int canaryParallel = 4;
    /** Connections per arm the canary run tops up to (more downloads when the random split leaves fewer). */
    int canaryMinPerArm = Comparison.MIN_PER_ARM;
    long seed = 1;
    Path out;
    Path agentJar;

    private final long start = System.nanoTime();

    public static void main(String[] args) {
        Demo d = new Demo();
        try {
            d.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("ccagent demo: " + e.getMessage() + "\n" + USAGE);
            System.exit(2);
            return;
        }
        int status;
        try {
            status = d.run();
        } catch (IOException e) {
            System.err.println("ccagent demo: " + e.getMessage());
            status = 1;
        } catch (Exception e) {
            System.err.println("ccagent demo: failed: " + e);
            e.printStackTrace();
            status = 1;
        }
        System.out.flush();
        System.exit(status);
    }

    void parse(String[] args) {
        boolean quick = false;
        List<String[]> rest = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String flag = args[i];
            if (flag.equals("--quick")) {
                quick = true;
                continue;
            }
            if (flag.equals("--help") || flag.equals("-h")) {
                throw new IllegalArgumentException("help");
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(flag + " needs a value");
            }
            rest.add(new String[] {flag, args[++i]});
        }
        if (quick) {
            bytes = 1_500_000;
            canaryConnections = 4;
            canaryBytes = 600_000;
            canaryMinPerArm = 1; // both arms shown, no verdict expected
        }
        for (String[] fv : rest) {
            String v = fv[1];
            try {
                switch (fv[0]) {
                    case "--rate": rate = Units.parseRateBitsPerSecond(v); break;
                    case "--rtt": rttNanos = Units.parseDurationNanos(v); break;
                    case "--loss":
                        loss = Double.parseDouble(v);
                        if (!(loss >= 0 && loss < 1)) {
                            throw new IllegalArgumentException("--loss " + v + ": expected a probability in [0, 1)");
                        }
                        break;
                    case "--buffer":
                        if (v.toLowerCase(Locale.ROOT).endsWith("bdp")) {
                            bufferBdp = Double.parseDouble(v.substring(0, v.length() - 3).strip());
                            bufferBytes = -1;
                        } else {
                            bufferBytes = Units.parseBytes(v);
                        }
                        break;
                    case "--bytes": bytes = Units.parseBytes(v); break;
                    case "--cc": cc = v; break;
                    case "--canary": canary = v; break;
                    case "--canary-connections": canaryConnections = Integer.parseInt(v); break;
                    case "--canary-bytes": canaryBytes = Units.parseBytes(v); break;
                    case "--canary-parallel": canaryParallel = Integer.parseInt(v); break;
                    case "--seed": seed = Long.parseLong(v); break;
                    case "--out": out = Path.of(v); break;
                    case "--agent-jar": agentJar = Path.of(v); break;
                    default: throw new IllegalArgumentException("unknown flag " + fv[0]);
                }
            } catch (RuntimeException e) {
                if (e instanceof IllegalArgumentException && e.getMessage() != null && e.getMessage().startsWith("--")) {
                    throw e;
                }
                throw new IllegalArgumentException(fv[0] + " " + v + ": " + e.getMessage());
            }
        }
        if (rate <= 0 || rttNanos <= 0 || bytes <= 0 || canaryBytes <= 0 || canaryConnections < 0 || canaryParallel <= 0
                || bufferBdp <= 0 || (bufferBytes == 0)) {
            throw new IllegalArgumentException("rate, rtt, sizes and buffer must be > 0");
        }
        if (!cc.matches("[\\w-]+") || !canary.matches("[\\w:%.,-]*")) {
            throw new IllegalArgumentException("--cc / --canary: unexpected characters");
        }
    }

    void progress(String what) {
        System.out.printf(Locale.ROOT, "[%5.1fs] %s%n", (System.nanoTime() - start) / 1e9, what);
        System.out.flush();
    }

    LinkProfile.Builder direction() {
        LinkProfile.Builder b = LinkProfile.builder().rate(rate);
        if (bufferBytes > 0) {
            b.buffer(bufferBytes);
        } else {
            b.bufferBdp(bufferBdp, rttNanos);
        }
        return b;
    }

    /** Client arguments for a warm-up download of {@code bytes} straight from {@code server}. */
    static List<String> warmup(KwikRun server, long bytes) throws IOException, InterruptedException {
        return List.of("--warmup-port", Integer.toString(server.awaitPort(Duration.ofSeconds(90))), "--warmup-bytes",
                Long.toString(bytes));
    }

    int run() throws Exception {
        BuildTree tree = agentJar != null ? BuildTree.of(agentJar) : BuildTree.locate();
        if (out == null) {
            out = Path.of("ccagent-demo-" + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
        }
        out = out.toAbsolutePath().normalize();
        Files.createDirectories(out);
        LinkProfile up = direction().delay(rttNanos / 2).build();
        LinkProfile down = direction().delay(rttNanos - rttNanos / 2).loss(loss).build();
        long bdp = (long) (rate / 8.0 * rttNanos / 1e9);
        System.out.printf(Locale.ROOT, "ccagent demo: kwik downloads through the link emulator on 127.0.0.1: %s, %s RTT, "
                        + "%.1f%% loss (server -> client), %s buffer (%s)%n", Units.formatBitRate(rate),
                Units.formatNanos(rttNanos), loss * 100, bufferBytes > 0 ? bufferBytes + " B"
                        : fmt(bufferBdp) + " BDP", mb(bufferBytes > 0 ? bufferBytes : (long) (bdp * bufferBdp)));
        System.out.println("output directory: " + out);

        progress("generating a TLS key store");
        Path keyStore = out.resolve("server.p12");
        Files.deleteIfExists(keyStore);
        SelfSignedKeyStore.generate(keyStore);

        String fix = "fix.kwik-stream-stall=on;log=debug";
        Path stockJfr = out.resolve("stock.jfr");
        Path ccJfr = out.resolve(cc + ".jfr");
        Path canaryJfr = out.resolve("canary.jfr");
        boolean runCanary = canaryConnections > 0 && !canary.isEmpty();
        progress("starting " + (runCanary ? 3 : 2) + " kwik servers: stock (cc=stock, kwik's NewReno untouched), "
                + cc + " (cc=" + cc + ")" + (runCanary ? ", canary (canary=" + canary + ")" : ""));
        List<KwikRun> servers = java.util.Collections.synchronizedList(new ArrayList<>());
        Thread cleanup = new Thread(() -> {
            synchronized (servers) {
                servers.forEach(KwikRun::close);
            }
        }, "demo-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
        try {
            KwikRun stock = add(servers, KwikRun.launch(tree, out, "stock", keyStore,
                    "cc=stock;" + fix + ";jfr=" + stockJfr, stockJfr, List.of()));
            KwikRun injected = add(servers, KwikRun.launch(tree, out, cc, keyStore,
                    "cc=" + cc + ";" + fix + ";jfr=" + ccJfr, ccJfr, List.of()));
            KwikRun split = runCanary ? add(servers, KwikRun.launch(tree, out, "canary", keyStore,
                    "canary=" + canary + ";" + fix + ";jfr=" + canaryJfr, canaryJfr, List.of())) : null;
            for (KwikRun s : servers) {
                try {
                    s.awaitPort(Duration.ofSeconds(90));
                } catch (IOException e) {
                    throw new IOException("a kwik server did not start: " + e.getMessage());
                }
            }
            int steps = runCanary ? 3 : 2;
            Duration timeout = Duration.ofSeconds(300);

            // each client JVM first downloads straight from its server (not through the emulator, not
            // counted): cold JVMs on a small machine spend a short transfer JIT-compiling, and a sender
            // that wakes late makes BBR measure the CPU instead of the link
            long warmup = bytes >= 4_000_000 ? 10_000_000 : 2_000_000;
            progress("run 1/" + steps + ": kwik stock NewReno, one download of " + mb(bytes) + " (after a "
                    + mb(warmup) + " warm-up straight from the server) ...");
            KwikRun.Outcome s = stock.run(tree, up, down, seed, bytes, 1, 1, timeout, warmup(stock, warmup));
            stock.finish(s);
            check(s, 1, stock, "stock");
            progress("  " + line(s.transfers.get(0)));

            progress("run 2/" + steps + ": kwik + " + cc + " injected by the agent, the same download ...");
            KwikRun.Outcome b = injected.run(tree, up, down, seed, bytes, 1, 1, timeout, warmup(injected, warmup));
            injected.finish(b);
            check(b, 1, injected, cc);
            progress("  " + line(b.transfers.get(0)));

            KwikRun.Outcome c = null;
            if (split != null) {
                int parallel = Math.max(1, Math.min(canaryParallel, canaryConnections));
                progress("run 3/3: canary=" + canary + ", " + canaryConnections + " downloads of " + mb(canaryBytes)
                        + ", " + parallel + " at a time ...");
                c = split.run(tree, up, down, seed + 100, canaryBytes, canaryConnections, parallel, timeout,
                        List.of());
                // the arm follows the (random) connection id: one arm can come out with fewer connections
                // than the report needs for a verdict (or, with few, none); then some more downloads
                for (int extra = 1; extra <= 3 && c.allOk(c.transfers.size()) && anArmBelow(split, c, canaryMinPerArm);
                     extra++) {
                    int n = Math.max(2, canaryConnections / 2);
                    progress("  one arm got fewer than " + canaryMinPerArm + " connection(s) (the split follows random "
                            + "connection ids): " + n + " more downloads");
                    KwikRun.Outcome more = split.run(tree, up, down, seed + 100 + extra, canaryBytes, n,
                            Math.min(n, parallel), timeout, List.of());
                    c.transfers.addAll(more.transfers);
                    canaryConnections += n;
                    if (more.clientExit != 0) {
                        c.clientExit = more.clientExit;
                        c.clientOutput += more.clientOutput;
                    }
                }
                split.finish(c);
                check(c, canaryConnections, split, "canary");
                progress("  done");
            }

            progress("reading the JFR recordings");
            Map<String, RecordingReport> reports = new LinkedHashMap<>();
            for (Path p : new Path[] {stockJfr, ccJfr, canaryJfr}) {
                if (Files.isRegularFile(p) && Files.size(p) > 0) {
                    try {
                        reports.put(p.getFileName().toString(), RecordingReport.read(p));
                    } catch (IOException e) {
                        System.out.println("  cannot read " + p + ": " + e.getMessage());
                    }
                }
            }

            System.out.println();
            System.out.printf(Locale.ROOT, "Result: one download of %s each, same link and seed%n", mb(bytes));
            System.out.printf(Locale.ROOT, "  %-26s %14s %10s %9s %11s %22s%n", "server", "goodput", "time", "vs stock",
                    "link drops", "RTT p50 / p95 (JFR)");
            Transfer0 st = new Transfer0(s);
            Transfer0 bb = new Transfer0(b);
            row("kwik stock NewReno", st, st, null);
            row("kwik + " + cc + " (agent)", bb, st, reports.get(ccJfr.getFileName().toString()));
            if (c != null) {
                System.out.println();
                System.out.printf(Locale.ROOT, "Canary run: canary=%s, %d downloads of %s, %d at a time (arm chosen "
                        + "per connection id)%n", canary, canaryConnections, mb(canaryBytes),
                        Math.max(1, Math.min(canaryParallel, canaryConnections)));
                System.out.printf(Locale.ROOT, "  %-26s %5s %18s %14s %14s%n", "arm", "conns", "mean goodput",
                        "mean time", "vs stock arm");
                Map<String, List<KwikRun.Transfer>> byArm = new LinkedHashMap<>();
                for (KwikRun.Transfer t : c.transfers) {
                    String key = (t.arm.isEmpty() ? "?" : t.arm) + " " + (t.algorithm.isEmpty() ? "?" : t.algorithm);
                    byArm.computeIfAbsent(key, k -> new ArrayList<>()).add(t);
                }
                double stockArm = byArm.entrySet().stream().filter(e -> e.getKey().endsWith(" stock"))
                        .mapToDouble(e -> e.getValue().stream().mapToDouble(t -> t.mbps).average().orElse(0))
                        .findFirst().orElse(0);
                for (Map.Entry<String, List<KwikRun.Transfer>> e : byArm.entrySet()) {
                    double g = e.getValue().stream().mapToDouble(t -> t.mbps).average().orElse(0);
                    double secs = e.getValue().stream().mapToDouble(t -> t.seconds).average().orElse(0);
                    System.out.printf(Locale.ROOT, "  %-26s %5d %13.2f Mbit/s %12.2f s %14s%n", e.getKey(),
                            e.getValue().size(), g, secs, stockArm > 0 ? String.format(Locale.ROOT, "%.2fx", g / stockArm) : "-");
                }
                System.out.println("  (the arms share the link at the same time; with few connections the split may be uneven)");
            }
            System.out.println();
            System.out.println("JFR recordings: " + stockJfr + ", " + ccJfr + (c != null ? ", " + canaryJfr : ""));
            // the report's own HTML page (as `ccagent.jar report --html` writes it) per recording; the
            // canary recording's has both arms and their verdicts
            List<String> html = new ArrayList<>();
            FleetReport canaryReport = null;
            for (String name : reports.keySet()) {
                Path page = out.resolve(name.replaceFirst("\\.jfr$", "") + ".html");
                try {
                    FleetReport fleet = FleetReport.read(List.of(out.resolve(name)), new FleetReport.Options());
                    if (name.equals(canaryJfr.getFileName().toString())) {
                        canaryReport = fleet;
                    }
                    FleetHtml.write(fleet, page);
                    html.add(page.toString());
                } catch (IOException | RuntimeException ex) {
                    System.out.println("  cannot write " + page + ": " + ex);
                }
            }
            if (canaryReport != null) {
                System.out.println();
                if (canaryReport.baseline() == null) {
                    System.out.println("Canary verdicts: none (" + canaryReport.baselineProblem() + ")");
                }
                for (FleetReport.ArmComparison ac : canaryReport.comparisons()) {
                    System.out.printf(Locale.ROOT, "Canary verdicts (the report over canary.jfr): %s (%d connections) "
                            + "vs baseline %s (%d)%n", ac.arm.name, ac.arm.connections, ac.baseline.name,
                            ac.baseline.connections);
                    for (Comparison m : ac.metrics) {
                        System.out.println("  " + FleetOutput.verdictLine(m));
                    }
                }
            }
            if (!html.isEmpty()) {
                // the canary page first: it has both arms
                html.sort((x, y) -> Boolean.compare(!x.endsWith("canary.html"), !y.endsWith("canary.html")));
                System.out.println("HTML report: " + html.get(0));
                if (html.size() > 1) {
                    System.out.println("  (also " + String.join(", ", html.subList(1, html.size())) + ")");
                }
            }
            System.out.println("Same with: java -jar agent/target/ccagent.jar report " + (c != null ? canaryJfr : ccJfr));
            progress("done");
            return 0;
        } finally {
            for (KwikRun r : servers) {
                r.close();
            }
        }
    }

    /** Whether an arm of the canary split got fewer than {@code min} connections (false when one arm is meant to be empty). */
    boolean anArmBelow(KwikRun split, KwikRun.Outcome c, int min) {
        double share = 0;
        java.util.regex.Matcher m = java.util.regex.Pattern.compile(":([\\d.]+)%").matcher(canary);
        while (m.find()) {
            share += Double.parseDouble(m.group(1));
        }
        if (share <= 0 || share >= 100) {
            return false; // one arm is meant to be empty
        }
        split.assignArms(c);
        long stock = c.transfers.stream().filter(t -> t.algorithm.equals("stock")).count();
        long other = c.transfers.stream().filter(t -> !t.algorithm.isEmpty() && !t.algorithm.equals("stock")).count();
        return stock < min || other < min;
    }

    /** The single transfer of a one-connection outcome plus the link counters. */
    static final class Transfer0 {
        final KwikRun.Transfer t;
        final KwikRun.Outcome o;

        Transfer0(KwikRun.Outcome o) {
            this.o = o;
            this.t = o.transfers.get(0);
        }
    }

    static void row(String label, Transfer0 x, Transfer0 stock, RecordingReport report) {
        String rtt = "-";
        if (report != null) {
            // this download's connection only: the recording also holds the client's warm-up connection
            for (RecordingReport.Connection c : report.connections()) {
                if (c.id.equals(x.t.odcid) && c.rttPercentileMillis(50) > 0) {
                    rtt = String.format(Locale.ROOT, "%.0f / %.0f ms", c.rttPercentileMillis(50),
                            c.rttPercentileMillis(95));
                }
            }
        }
        long drops = x.o.down.getOrDefault("droppedRandom", 0L) + x.o.down.getOrDefault("droppedQueue", 0L);
        System.out.printf(Locale.ROOT, "  %-26s %7.2f Mbit/s %8.2f s %8.2fx %11d %22s%n", label, x.t.mbps, x.t.seconds,
                stock.t.mbps > 0 ? x.t.mbps / stock.t.mbps : 0, drops, rtt);
    }

    static String line(KwikRun.Transfer t) {
        return String.format(Locale.ROOT, "done: %s in %.2f s, %.2f Mbit/s", mb(t.bytes), t.seconds, t.mbps);
    }

    static void check(KwikRun.Outcome o, int expected, KwikRun run, String what) throws IOException {
        if (!o.allOk(expected)) {
            throw new IOException("the " + what + " run failed (client exit " + o.clientExit + "):\n" + o.clientOutput
                    + run.describe());
        }
    }

    private static KwikRun add(List<KwikRun> list, KwikRun r) {
        list.add(r);
        return r;
    }

    static String mb(long b) {
        return String.format(Locale.ROOT, "%.1f MB", b / 1e6);
    }

    static String fmt(double d) {
        return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
    }
}
