package dev.ccagent.it.kwik;

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
 * <p>What is asserted, and only that: per algorithm, the median of {@value #PAIRS} interleaved pairs
 * (kwik's stock NewReno download, then the algorithm's, each a fixed 10 MB, on two servers started and
 * warmed up side by side for that algorithm)
 * of server CPU ratios stays within {@value #LIMIT}× stock. A spin costs many times that. The finer
 * "within 20%" is a speed figure this loaded 2-core machine cannot assert; the ratios and their spread
 * are printed ({@code [it] cpu ...}) and BENCHMARKS.md gives measured figures with their command. Every
 * pair counts, pass or fail: no retry.
 *
 * <p>The server's figure is its process CPU time from the request to the client's close (its
 * {@code SERVED} line). That the algorithm really ran is checked in the server's heap
 * ({@link HeapClasses}) during the warm-up download.
 */
class KwikCpuTest {

    static final long BYTES = 10_000_000;
    static final int PAIRS = 3;
    static final double LIMIT = 1.50;

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

    /** A server with {@code cc=algorithm} after two 5 MB warm-up downloads, the first of which must create that controller. */
    private static KwikIt.Server warmServer(Path dir, String algorithm, String round) throws Exception {
        String name = algorithm + "-for-" + round;
        KwikIt.Server server = KwikIt.startServer(dir, "server-" + name, "cc=" + algorithm + ";fix.kwik-stream-stall=on");
        try {
            HeapClasses.During<KwikIt.ClientRun> d = HeapClasses.createdDuring(server.jvm.pid(), () ->
                    KwikIt.runClient(dir, "warmup-" + name, null, Duration.ofSeconds(120),
                            "--port", Integer.toString(server.port), "--mode", "down", "--bytes", "5000000", "--seed", "3"));
            assertTrue(d.result().allOk(1), d.result().describe + server.jvm.describe());
            assertEquals(algorithm.equals("stock") ? Set.of() : Set.of(algorithm), d.algorithms(), "created: " + d.created());
            KwikIt.ClientRun second = KwikIt.runClient(dir, "warmup2-" + name, null, Duration.ofSeconds(120),
                    "--port", Integer.toString(server.port), "--mode", "down", "--bytes", "5000000", "--seed", "3");
            assertTrue(second.allOk(1), second.describe + server.jvm.describe());
            return server;
        } catch (Exception | AssertionError e) {
            server.close();
            throw e;
        }
    }

    /** Server CPU nanoseconds for one download; {@code served} counts the server's SERVED lines so far. */
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
        return cpu;
    }
}
