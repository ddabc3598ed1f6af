package dev.ccagent.it.kwik;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A 100 MB download over plain loopback with each injected algorithm (paced by our pacer) must not
 * spin: the localhost case where a busy-looping pacer shows up as CPU, or as a hang (the quic-go
 * BBR port burned a whole core). The server's CPU for the transfer must stay within
 * {@value #LIMIT}× kwik's stock NewReno, measured in the same run: a spin costs many times that.
 *
 * <p>The finer target, within 20% of stock, is a speed figure, not a behaviour this 2-core
 * machine can assert: run to run the same configuration varies by ±15% here (stock itself from 6.4
 * to 9.6 s; newreno vs stock from 0.87 to 1.20). The ratios are printed ({@code [it] cpu ...}) and
 * recorded in BENCHMARKS.md ("kwik on loopback: CPU per transfer").
 *
 * <p>Each server is a fresh JVM; a 5 MB warm-up transfer precedes the measured one; the figure is
 * the server's process CPU time from the request to the client's close (the {@code SERVED} line).
 * The stock baseline is measured once up front, and again next to each repeated measurement.
 * Every server runs the agent with the stall fix; the baseline is {@code cc=stock}, where kwik's
 * own controller stays in place. The bound is not loosened on a loaded machine: a run whose ratio
 * fails is repeated (up to 3 measurements per algorithm), and the median ratio is what must hold.
 */
class KwikCpuTest {

    static final long BYTES = 100_000_000;
    static final double LIMIT = 1.50;

    @Test
    @Timeout(value = 600, unit = TimeUnit.SECONDS)
    void injectedAlgorithmsDoNotSpinOnLoopback() throws Exception {
        Path dir = KwikIt.workDir("cpu");
        Map<String, List<Double>> ratios = new LinkedHashMap<>();
        List<String> report = new ArrayList<>();
        int round = 0;
        long stock = measure(dir, "stock", round++);
        for (String algorithm : AgentJar.algorithms()) {
            List<Double> r = new ArrayList<>();
            ratios.put(algorithm, r);
            while (r.size() < 3) {
                if (!r.isEmpty()) {
                    stock = measure(dir, "stock", round); // a retry compares with a fresh baseline
                }
                long ours = measure(dir, algorithm, round++);
                double ratio = (double) ours / stock;
                r.add(ratio);
                report.add(String.format("%s: %.2f s CPU vs stock %.2f s: ratio %.2f", algorithm, ours / 1e9, stock / 1e9, ratio));
                System.out.println("[it] cpu " + report.get(report.size() - 1));
                if (r.size() == 1 && ratio <= LIMIT) {
                    break; // passes outright
                }
                if (r.size() == 2 && (r.get(0) > LIMIT) == (r.get(1) > LIMIT)) {
                    break; // two agree: the median of three cannot differ
                }
            }
        }
        for (Map.Entry<String, List<Double>> e : ratios.entrySet()) {
            List<Double> r = new ArrayList<>(e.getValue());
            r.sort(null);
            double median = r.get((r.size() - 1) / 2);
            long within = r.stream().filter(x -> x <= LIMIT).count();
            if (within * 2 <= r.size()) { // the median of 1 or 3 runs (or 2 that agree) is beyond the limit
                fail(e.getKey() + " used more than " + LIMIT + "x the stock CPU (median " + median + "):\n"
                        + String.join("\n", report));
            }
        }
    }

    /** Server CPU nanoseconds for one 100 MB download with {@code cc=algorithm}. */
    private static long measure(Path dir, String algorithm, int round) throws Exception {
        String name = algorithm + "-" + round;
        try (KwikIt.Server server = KwikIt.startServer(dir, "server-" + name,
                "cc=" + algorithm + ";log=debug;fix.kwik-stream-stall=on")) {
            KwikIt.ClientRun warm = KwikIt.runClient(dir, "warmup-" + name, null, Duration.ofSeconds(120),
                    "--port", Integer.toString(server.port), "--mode", "down", "--bytes", "5000000", "--seed", "3");
            assertTrue(warm.allOk(1), warm.describe + server.jvm.describe());
            KwikIt.ClientRun run = KwikIt.runClient(dir, "client-" + name, null, Duration.ofSeconds(240),
                    "--port", Integer.toString(server.port), "--mode", "down", "--bytes", Long.toString(BYTES), "--seed", "4");
            assertTrue(run.allOk(1), run.describe + server.jvm.describe());
            List<Matcher> served = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (served.size() < 2 && System.nanoTime() < deadline) {
                served.clear();
                for (String l : server.jvm.stdout().split("\n")) {
                    Matcher m = KwikIt.SERVED.matcher(l);
                    if (m.find()) {
                        served.add(m);
                    }
                }
                Thread.sleep(50);
            }
            assertEquals(2, served.size(), server.jvm.describe());
            Matcher m = served.get(1);
            assertEquals(Long.toString(BYTES), m.group(2));
            long cpu = Long.parseLong(m.group(4));
            assertTrue(cpu > 0, "no CPU figure: " + m.group());
            if (!algorithm.equals("stock")) {
                List<Matcher> lines = KwikIt.connectionLines(server.jvm.stderr());
                assertEquals(2, lines.size(), server.jvm.stderr());
                assertEquals(algorithm, lines.get(1).group(4));
            }
            System.out.printf("[it] cpu %s: 100 MB in %s s (%s Mbit/s), server CPU %.2f s%n", algorithm,
                    run.results.get(0).group(5), run.results.get(0).group(6), cpu / 1e9);
            return cpu;
        }
    }
}
