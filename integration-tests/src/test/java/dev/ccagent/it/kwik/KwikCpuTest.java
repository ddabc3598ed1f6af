package dev.ccagent.it.kwik;

import dev.ccagent.it.Acceptance;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
 * healthy single pairs ranged 0.70–2.15× on this machine and their medians 1.13–1.64 (bbr1 highest: its
 * small window at loopback RTTs makes kwik's sender wake for more ACKs; see BENCHMARKS.md).
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
