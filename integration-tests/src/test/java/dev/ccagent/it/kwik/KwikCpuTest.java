package dev.ccagent.it.kwik;

import dev.ccagent.it.Acceptance;
import dev.ccagent.it.DebianTool;
import dev.ccagent.it.ForkedJvm;
import dev.ccagent.it.ProcessCpu;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Downloads over plain loopback with each injected algorithm (paced by our pacer) must not spin: the
 * localhost case where a busy-looping pacer shows up as CPU (the quic-go BBR port burned a whole core).
 *
 * <p>What is asserted, and only that: per algorithm, over {@value #PAIRS} interleaved pairs (kwik's stock
 * NewReno download, then the algorithm's, each a fixed 10 MB, on two servers started and warmed up side by
 * side for that algorithm), the median of the per-pair ratios of server CPU stays within {@value #LIMIT}×
 * stock. The bound sits at the claim: a spinning sender keeps its thread busy for the download's whole wall
 * time (1.0–1.7 s here) on top of the 0.3–0.7 s the server needs, so a spin costs about 3× or more, while
 * healthy single pairs ranged 0.70–2.15× on this machine and their medians 1.13–1.64. Those figures are
 * not the algorithms' cost: this test's client is kwik too and slower than the server, so the transfer is
 * limited by the receiver and each paced algorithm's sender is woken by the pacer's timer thread once per
 * burst, which unpaced stock kwik never needs (async-profiler, BENCHMARKS.md "kwik on loopback: CPU per
 * transfer"); {@link #injectedAlgorithmsOnACpuBoundHttp3Transfer} measures a CPU-bound transfer.
 * {@link #aSenderBurningItsThreadFailsTheBound}
 * shows the measurement failing a sender that burns its thread. The finer "within 20%" is a speed figure
 * this loaded 2-core machine cannot assert; the ratios and their spread are printed ({@code [it] cpu ...})
 * and BENCHMARKS.md gives measured figures with their command. Every pair counts, pass or fail: no retry.
 *
 * <p>The server's figure is its process CPU time from the request to the client's close (its
 * {@code SERVED} line) minus the CPU time of its JIT compiler threads meanwhile (read from
 * {@code /proc/self/task}, printed on the same line). Without that subtraction a server still
 * compiles tens of megabytes after its warm-up, and by a different amount beside each algorithm: stock's
 * own CPU per download fell from 1.56 to 0.78 s over six 10 MB downloads in one run, and single pairs
 * swung from 0.73 to 2.21. That the algorithm really ran is checked in the server's heap
 * ({@link HeapClasses}) during the warm-up download.
 */
@Acceptance("server CPU per MB of each algorithm against stock, interleaved pairs")
class KwikCpuTest {

    static final long BYTES = 10_000_000;
    static final int PAIRS = 3;
    static final double LIMIT = 2.5;

    @Test
    @Timeout(value = 900, unit = TimeUnit.SECONDS)
    void injectedAlgorithmsDoNotSpinOnLoopback() throws Exception {
        Path dir = KwikIt.workDir("cpu");
        List<String> failures = new ArrayList<>();
        for (String algorithm : KwikAlgorithmsTest.EXPECTED) {
            // a fresh stock server beside each algorithm's, warmed the same way: a stock server reused across
            // algorithms gets ever hotter (its JIT keeps compiling) and biases every later ratio against us
            try (KwikIt.Server stock = warmServer(dir, "stock", algorithm);
                 KwikIt.Server ours = warmServer(dir, algorithm, algorithm)) {
                int[] stockServed = {2}; // the two warm-ups
                int[] oursServed = {2};
                List<Double> ratios = new ArrayList<>();
                for (int i = 0; i < PAIRS; i++) {
                    long base = measure(dir, stock, "stock-" + algorithm, stockServed);
                    long cpu = measure(dir, ours, algorithm, oursServed);
                    ratios.add((double) cpu / base);
                    System.out.printf("[it] cpu pair %d: %s %.2f s vs stock %.2f s: %.2f%n", i + 1, algorithm,
                            cpu / 1e9, base / 1e9, (double) cpu / base);
                }
                List<Double> sorted = new ArrayList<>(ratios);
                sorted.sort(null);
                double median = sorted.get(sorted.size() / 2);
                System.out.printf("[it] cpu %s: median ratio %.2f (min %.2f, max %.2f) over %d pairs%n", algorithm,
                        median, sorted.get(0), sorted.get(sorted.size() - 1), PAIRS);
                if (median > LIMIT) {
                    failures.add(algorithm + ": median CPU ratio " + median + " > " + LIMIT + " " + ratios);
                }
            }
        }
        assertTrue(failures.isEmpty(), String.join("\n", failures));
    }

    /**
     * The same ratio on a CPU-bound transfer: Flupke's sample HTTP/3 server on kwik 0.10.9 (no code of ours,
     * {@link FlupkeFileServerDownloadsTest#serverClassPath()}) serves a 10 MB file over plain loopback to ngtcp2's
     * client (C, a fresh process per download), which takes it faster than the server can send, so the server's
     * CPU is the limit. Per algorithm, a fresh stock server (the agent, kwik's own NewReno) and the algorithm's
     * side by side, {@value #HTTP3_WARM_UPS} warm-up downloads each, then {@value #HTTP3_PAIRS} interleaved pairs;
     * the server's CPU per download is read from outside ({@code /proc}, less its JIT compiler threads), from
     * before the client starts until 300 ms after it exits. Each download's bytes are checked against the file's
     * SHA-256. Asserted: the spin bound {@value #LIMIT}× as above; the ratios are printed
     * ({@code [it] cpu-bound ...}) for BENCHMARKS.md, whose figures come from a quiet machine.
     *
     * <p>Why a second set-up: the suite's own client ({@link #injectedAlgorithmsDoNotSpinOnLoopback}) is kwik
     * too, and at 60-80 Mbit/s it is slower than the server; there each paced algorithm waits for its pacer's
     * timer thread to wake kwik's sender, once per burst, which stock kwik (unpaced) never does. That is the
     * 1.1-1.6× those pairs show (async-profiler, BENCHMARKS.md "kwik on loopback: CPU per transfer").
     */
    @Test
    @Timeout(value = 900, unit = TimeUnit.SECONDS)
    void injectedAlgorithmsOnACpuBoundHttp3Transfer() throws Exception {
        DebianTool client = FlupkeFileServerDownloadsTest.findClient();
        Path dir = KwikIt.workDir("cpu-http3");
        Path www = Files.createDirectories(dir.resolve("www"));
        byte[] content = new byte[(int) BYTES];
        new Random(36).nextBytes(content);
        Files.write(www.resolve("f10m.bin"), content);
        byte[] sha = FlupkeFileServerDownloadsTest.sha256(content);
        Path[] pem = SelfSignedKeyStore.generateRsaPem(dir);
        Path downloads = Files.createDirectories(dir.resolve("dl"));
        List<String> failures = new ArrayList<>();
        for (String algorithm : KwikAlgorithmsTest.EXPECTED) {
            try (KwikIt.Server stock = startHttp3Server(dir, "stock-for-" + algorithm, "", www, pem);
                 KwikIt.Server ours = startHttp3Server(dir, algorithm, "cc=" + algorithm, www, pem)) {
                HeapClasses.During<Long> d = HeapClasses.createdDuring(ours.jvm.pid(), () ->
                        http3Download(client, ours, downloads, sha));
                assertEquals(Set.of(algorithm), d.algorithms(), "created: " + d.created());
                for (int i = 0; i < HTTP3_WARM_UPS; i++) {
                    http3Download(client, stock, downloads, sha);
                    if (i > 0) {
                        http3Download(client, ours, downloads, sha);
                    }
                }
                List<Double> ratios = new ArrayList<>();
                for (int i = 0; i < HTTP3_PAIRS; i++) {
                    long base = http3Download(client, stock, downloads, sha);
                    long cpu = http3Download(client, ours, downloads, sha);
                    ratios.add((double) cpu / base);
                    System.out.printf("[it] cpu-bound pair %d: %s %.2f s vs stock %.2f s: %.2f (load average %.2f)%n",
                            i + 1, algorithm, cpu / 1e9, base / 1e9, (double) cpu / base,
                            FlupkeFileServerDownloadsTest.loadAverage());
                }
                List<Double> sorted = new ArrayList<>(ratios);
                sorted.sort(null);
                double median = sorted.get(sorted.size() / 2);
                System.out.printf("[it] cpu-bound %s: median ratio %.2f (min %.2f, max %.2f) over %d pairs%n",
                        algorithm, median, sorted.get(0), sorted.get(sorted.size() - 1), HTTP3_PAIRS);
                if (median > LIMIT) {
                    failures.add(algorithm + ": median CPU ratio " + median + " > " + LIMIT + " " + ratios);
                }
            }
        }
        assertTrue(failures.isEmpty(), String.join("\n", failures));
    }

    static final int HTTP3_WARM_UPS = 3;
    static final int HTTP3_PAIRS = 5;

    /** Flupke's sample server with the agent ({@code agentArgs}; "" for its defaults), started. */
    private static KwikIt.Server startHttp3Server(Path dir, String name, String agentArgs, Path www, Path[] pem)
            throws Exception {
        int port = FlupkeFileServerDownloadsTest.freeUdpPort();
        ForkedJvm server = ForkedJvm.builder("server-" + name, FlupkeFileServerDownloadsTest.SERVER_MAIN)
                .classPath(FlupkeFileServerDownloadsTest.serverClassPath())
                .dir(dir)
                .jvmArgs("-Xmx512m", "-XX:+UseSerialGC")
                .javaagent(KwikIt.agentJar(), agentArgs)
                .args(pem[0].toString(), pem[1].toString(), Integer.toString(port), www.toString())
                .start();
        try {
            server.awaitLine(FlupkeFileServerDownloadsTest.STARTED, KwikIt.START_TIMEOUT);
            return new KwikIt.Server(server, port);
        } catch (IOException | InterruptedException | RuntimeException e) {
            server.close();
            throw e;
        }
    }

    /**
     * One download of the 10 MB file by a fresh ngtcp2 client; checks its bytes; the server's CPU nanoseconds
     * meanwhile, less its JIT compiler threads' (never below one 10 ms tick).
     */
    private static long http3Download(DebianTool client, KwikIt.Server server, Path downloads, byte[] sha)
            throws Exception {
        Path file = downloads.resolve("f10m.bin");
        Files.deleteIfExists(file);
        long pid = server.jvm.pid();
        long cpu0 = ProcessCpu.totalNanos(pid);
        long jit0 = ProcessCpu.jitNanos(pid);
        Process p = FlupkeFileServerDownloadsTest.startClient(client, server.port, "f10m.bin", downloads,
                downloads.resolve("client.log"));
        try {
            assertTrue(p.waitFor(120, TimeUnit.SECONDS), "ngtcp2's client still running after 120 s");
        } finally {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
        Thread.sleep(300); // the server's end of the connection: the client's close, its last ACKs
        long cpu = ProcessCpu.totalNanos(pid) - cpu0;
        long jit = ProcessCpu.jitNanos(pid) - jit0;
        assertEquals(0, p.exitValue(), "ngtcp2's client: " + Files.readString(downloads.resolve("client.log")));
        assertTrue(Files.exists(file) && java.security.MessageDigest.isEqual(sha,
                FlupkeFileServerDownloadsTest.sha256(Files.readAllBytes(file))), "the download is not the file: " + file);
        assertTrue(cpu0 >= 0 && jit0 >= 0, "no /proc figures for the server");
        return Math.max(cpu - jit, TimeUnit.MILLISECONDS.toNanos(10));
    }

    /**
     * The negative control: the same measurement fails a sender that burns its thread. The test-only
     * {@code busy-spin} controller (NewReno that burns 1 ms of CPU per data packet on kwik's sender thread)
     * against a stock server warmed like the pairs above; one 10 MB download each.
     */
    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void aSenderBurningItsThreadFailsTheBound() throws Exception {
        Path dir = KwikIt.workDir("cpu-control");
        try (KwikIt.Server stock = warmServer(dir, "stock", "control");
             KwikIt.Server spin = SafetyIt.startServer(dir, "server-busy-spin", "cc=" + dev.ccagent.it.jfr.BusySpin.NAME
                     + ";opt.busy-spin.healthy-packets=0;opt.busy-spin.burn-ms=1;fix.kwik-stream-stall=on", List.of())) {
            KwikIt.ClientRun warm = KwikIt.runClient(dir, "warmup-busy-spin", null, Duration.ofSeconds(120),
                    "--port", Integer.toString(spin.port), "--mode", "down", "--bytes", "1000000", "--seed", "3");
            assertTrue(warm.allOk(1), warm.describe + spin.jvm.describe());
            long base = measure(dir, stock, "stock-control", new int[] {2});
            long cpu = measure(dir, spin, "busy-spin", new int[] {1});
            double ratio = (double) cpu / base;
            System.out.printf("[it] cpu control: busy-spin %.2f s vs stock %.2f s: %.2f (bound %.2f)%n", cpu / 1e9,
                    base / 1e9, ratio, LIMIT);
            assertTrue(ratio > LIMIT, "a sender burning 1 ms per packet passed the bound: " + ratio);
        }
    }

    /**
     * A server with {@code cc=algorithm} after two warm-up downloads (5 MB, then the measured 10 MB), the first of
     * which must create that controller.
     */
    private static KwikIt.Server warmServer(Path dir, String algorithm, String round) throws Exception {
        String name = algorithm + "-for-" + round;
        KwikIt.Server server = KwikIt.startServer(dir, "server-" + name, "cc=" + algorithm + ";fix.kwik-stream-stall=on");
        try {
            HeapClasses.During<KwikIt.ClientRun> d = HeapClasses.createdDuring(server.jvm.pid(), () ->
                    KwikIt.runClient(dir, "warmup-" + name, null, Duration.ofSeconds(120),
                            "--port", Integer.toString(server.port), "--mode", "down", "--bytes", "5000000", "--seed", "3"));
            assertTrue(d.result().allOk(1), d.result().describe + server.jvm.describe());
            assertEquals(algorithm.equals("stock") ? Set.of() : Set.of(algorithm), d.algorithms(), "created: " + d.created());
            // the second warm-up is the measured download itself (size and seed): in CI the first measured pair
            // after two 5 MB warm-ups still cost up to 1.7x (the JIT was still compiling the longer transfer's paths)
            KwikIt.ClientRun second = KwikIt.runClient(dir, "warmup2-" + name, null, Duration.ofSeconds(120),
                    "--port", Integer.toString(server.port), "--mode", "down", "--bytes", Long.toString(BYTES), "--seed", "4");
            assertTrue(second.allOk(1), second.describe + server.jvm.describe());
            return server;
        } catch (Exception | AssertionError e) {
            server.close();
            throw e;
        }
    }

    /**
     * Server CPU nanoseconds for one download, less its JIT compilation; {@code served} counts the server's SERVED
     * lines so far.
     */
    private static long measure(Path dir, KwikIt.Server server, String algorithm, int[] served) throws Exception {
        KwikIt.ClientRun run = KwikIt.runClient(dir, "client-" + algorithm + "-" + served[0], null,
                Duration.ofSeconds(240), "--port", Integer.toString(server.port), "--mode", "down",
                "--bytes", Long.toString(BYTES), "--seed", "4");
        assertTrue(run.allOk(1), run.describe + server.jvm.describe());
        assertEquals(0, run.retries(), "the stream-stall fix is on: no stalled attempt\n" + run.stdout);
        served[0]++;
        List<Matcher> lines = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (lines.size() < served[0] && System.nanoTime() < deadline) {
            lines.clear();
            for (String l : server.jvm.stdout().split("\n")) {
                Matcher m = KwikIt.SERVED.matcher(l);
                if (m.find()) {
                    lines.add(m);
                }
            }
            Thread.sleep(50);
        }
        assertEquals(served[0], lines.size(), server.jvm.describe());
        Matcher m = lines.get(served[0] - 1);
        assertEquals(Long.toString(BYTES), m.group(2));
        long cpu = Long.parseLong(m.group(4));
        assertTrue(cpu > 0, "no CPU figure: " + m.group());
        assertTrue(m.group(5) != null, "no JIT figure: " + m.group());
        long jit = Math.max(0, Long.parseLong(m.group(5))); // -1: not Linux, the whole process figure counts
        System.out.printf("[it] cpu %s: %s (process CPU %.2f s, of which JIT compiler threads %.2f s)%n", algorithm,
                m.group(), cpu / 1e9, jit / 1e9);
        // both figures tick in 10 ms steps: never below one tick
        return Math.max(cpu - jit, TimeUnit.MILLISECONDS.toNanos(10));
    }
}
