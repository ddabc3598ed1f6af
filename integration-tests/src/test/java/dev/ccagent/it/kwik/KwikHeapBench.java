package dev.ccagent.it.kwik;

import dev.ccagent.it.ForkedJvm;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * BENCHMARK, not part of the default test run (the class name does not end in Test): the agent's
 * retained heap per kwik connection, measured from outside with {@code jcmd GC.class_histogram}
 * (which runs a full GC first) on a forked server that holds N connections open.
 *
 * <p>For each configuration one server: histogram with no connection, with N idle connections
 * (handshake only), then with N more after a bulk download each. Two figures per step:
 * the bytes of {@code dev.ccagent.*} instances per connection (exact, but without the arrays our
 * objects own), and the growth of the whole heap per connection minus that of the same step on a
 * server whose agent assigns nothing ({@code cc=stock;detect=off}: no per-connection state; includes
 * those arrays; noisier: kwik's own buffers dominate). Writes
 * {@code docs/bench/heap-per-connection.csv}.
 *
 * <pre>mvn -B verify -pl integration-tests -am -Dtest=KwikHeapBench -Dsurefire.failIfNoSpecifiedTests=false
 *     [-Dbench.connections=100] [-Dbench.bytes=1000000] [-Dbench.configs=stock,newreno,... (stock first)]</pre>
 */
class KwikHeapBench {

    private static final Pattern HOLDING = Pattern.compile("^HOLDING (\\d+)");

    @Test
    void heapPerConnection() throws Exception {
        int n = Integer.getInteger("bench.connections", 100);
        long bytes = Long.getLong("bench.bytes", 1_000_000L);
        Path dir = KwikIt.workDir("heap-bench");
        String[] configs = System.getProperty("bench.configs", "stock,newreno,cubic,reno-hbdp,bbr1,bbr3").split(",");
        List<String> rows = new ArrayList<>();
        rows.add("algorithm,connections,bulk_bytes,step,agent_instance_bytes_per_conn,heap_growth_per_conn,"
                + "heap_growth_minus_stock_per_conn,load_average");
        double[] stockGrowth = new double[2];
        for (String alg : configs) {
            // the baseline runs the agent too (its classes and static state, and the stream-stall fix
            // without which a held download may stall), but assigns nothing: no per-connection state
            String label = alg;
            String args = "cc=" + alg + ";detect=off;log=warn;fix.kwik-stream-stall=on";
            try (KwikIt.Server server = SafetyIt.startServer(dir, "server-" + label, args, List.of(),
                    "--idle-seconds", "600")) {
                long pid = server.jvm.pid();
                String h0 = ForkedJvm.jcmd(pid, "GC.class_histogram");
                long[] total = {total(h0), 0, 0};
                long[] agent = {SafetyIt.bytesOf(h0, "dev.ccagent."), 0, 0};
                try (ForkedJvm idle = hold(dir, "idle-" + label, server.port, n, 0)) {
                    String h1 = ForkedJvm.jcmd(pid, "GC.class_histogram");
                    total[1] = total(h1);
                    agent[1] = SafetyIt.bytesOf(h1, "dev.ccagent.");
                    try (ForkedJvm bulk = hold(dir, "bulk-" + label, server.port, n, bytes)) {
                        String h2 = ForkedJvm.jcmd(pid, "GC.class_histogram");
                        total[2] = total(h2);
                        agent[2] = SafetyIt.bytesOf(h2, "dev.ccagent.");
                    }
                }
                String load = String.format("%.2f", java.lang.management.ManagementFactory.getOperatingSystemMXBean()
                        .getSystemLoadAverage());
                for (int step = 1; step <= 2; step++) {
                    double perAgent = (agent[step] - agent[step - 1]) / (double) n;
                    double growth = (total[step] - total[step - 1]) / (double) n;
                    if (alg.equals("stock")) {
                        stockGrowth[step - 1] = growth;
                    }
                    double minusStock = growth - stockGrowth[step - 1];
                    String row = String.format("%s,%d,%d,%s,%.0f,%.0f,%.0f,%s", label, n, step == 1 ? 0 : bytes,
                            step == 1 ? "idle" : "after-bulk", perAgent, growth, alg.equals("stock") ? 0 : minusStock, load);
                    rows.add(row);
                    System.out.println("[bench] " + row);
                }
            }
        }
        Path csv = Path.of(System.getProperty("it.classes", ".")).resolve("../../../docs/bench/heap-per-connection.csv")
                .normalize();
        if (Files.isDirectory(csv.getParent())) {
            Files.write(csv, rows);
            System.out.println("[bench] wrote " + csv);
        }
    }

    private static ForkedJvm hold(Path dir, String name, int port, int n, long bytes)
            throws IOException, InterruptedException {
        ForkedJvm jvm = ForkedJvm.builder(name, HoldClient.class.getName())
                .classPath(SafetyIt.classPath()).dir(dir)
                .jvmArgs("-Xmx1g", "-XX:+UseSerialGC")
                .javaagent(KwikIt.agentJar(), "fix.kwik-stream-stall=on;log=warn")
                .args(Integer.toString(port), Integer.toString(n), Long.toString(bytes))
                .start();
        try {
            jvm.awaitLine(HOLDING, Duration.ofSeconds(600));
            Thread.sleep(1000);
            return jvm;
        } catch (IOException | InterruptedException | RuntimeException e) {
            jvm.close();
            throw e;
        }
    }

    private static long total(String histogram) {
        for (String line : histogram.split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length == 3 && f[0].equals("Total")) {
                return Long.parseLong(f[2]);
            }
        }
        throw new IllegalStateException("no Total line in\n" + histogram);
    }
}
