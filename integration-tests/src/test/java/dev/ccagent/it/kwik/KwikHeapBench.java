package dev.ccagent.it.kwik;

import dev.ccagent.it.ForkedJvm;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * BENCHMARK, not part of the default test run (the class name does not end in Test): the agent's
 * retained heap per kwik connection, measured from outside with {@code jcmd GC.class_histogram}
 * (which runs a full GC first) on a forked server that holds N connections open.
 *
 * <p>For each configuration one server: histogram with no connection, with N idle connections
 * (handshake only), then with N more after a bulk download each; before the first, 5 connections
 * (with a download where the configuration has a bulk step) opened and closed again, so that the
 * one-time costs of the first connections (classes, caches) do not count as per-connection ones. Two figures per step:
 * the bytes of {@code dev.ccagent.*} instances per connection (exact, but without the arrays our
 * objects own), and the growth of the whole heap per connection minus that of the same step on the
 * baseline server {@code unmeasured} ({@code cc=stock;measure=off;detect=off}: the agent attached,
 * its stream-stall fix on, and no connection wrapped; includes those arrays; noisier: kwik's own
 * buffers, ~50 kB a connection, dominate). The baseline itself is compared, for idle connections, with
 * {@code none}: a server without the agent (no bulk step there: unpatched kwik's own stream-send race
 * stalls downloads). The other configurations run the agent's defaults ({@code measure=on},
 * {@code detect=on}): {@code stock} is {@code cc=stock}, every connection on kwik's NewReno and
 * measured; {@code stock-measure} and {@code stock-detect} the same with {@code detect=off} and with
 * {@code measure=off}; the rest are {@code cc=<name>}. Writes {@code docs/bench/heap-per-connection.csv}.
 *
 * <pre>mvn -B verify -pl integration-tests -am -Dtest=KwikHeapBench -Dsurefire.failIfNoSpecifiedTests=false
 *     [-Dbench.connections=100] [-Dbench.bytes=500000] [-Dbench.runs=1]
 *     [-Dbench.configs=none,unmeasured,stock,newreno,... (unmeasured before the rest)]</pre>
 */
class KwikHeapBench {

    private static final String BASELINE = "unmeasured";
    private static final int WARM_UP = 5;

    @Test
    void heapPerConnection() throws Exception {
        int n = Integer.getInteger("bench.connections", 100);
        long bytes = Long.getLong("bench.bytes", 500_000L);
        int runs = Integer.getInteger("bench.runs", 1);
        Path dir = KwikIt.workDir("heap-bench");
        String[] configs = System.getProperty("bench.configs",
                "none,unmeasured,stock-measure,stock-detect,stock,newreno,cubic,reno-hbdp,bbr1,bbr3").split(",");
        List<String> rows = new ArrayList<>();
        rows.add("config,agent_args,connections,bulk_bytes,step,agent_instance_bytes_per_conn,heap_growth_per_conn,"
                + "heap_growth_minus_unmeasured_per_conn,load_average,run");
        for (int run = 1; run <= runs; run++) {
            double[] baseGrowth = {Double.NaN, Double.NaN};
            for (String config : configs) {
                String args = agentArgs(config);
                boolean bulkStep = args != null;
                try (KwikIt.Server server = SafetyIt.startServer(dir, "server-" + config + "-" + run, args, List.of(),
                        "--idle-seconds", "600")) {
                    long pid = server.jvm.pid();
                    SafetyIt.warmUp(dir, "warm-" + config + "-" + run, server.port, WARM_UP, bulkStep ? bytes : 0);
                    String[] h = new String[3];
                    h[0] = ForkedJvm.jcmd(pid, "GC.class_histogram");
                    try (ForkedJvm idle = SafetyIt.hold(dir, "idle-" + config + "-" + run, server.port, n, 0)) {
                        h[1] = ForkedJvm.jcmd(pid, "GC.class_histogram");
                        if (bulkStep) {
                            try (ForkedJvm bulk = SafetyIt.hold(dir, "bulk-" + config + "-" + run, server.port, n, bytes)) {
                                h[2] = ForkedJvm.jcmd(pid, "GC.class_histogram");
                            }
                        }
                    }
                    String load = String.format("%.2f", java.lang.management.ManagementFactory.getOperatingSystemMXBean()
                            .getSystemLoadAverage());
                    for (int step = 1; step <= (bulkStep ? 2 : 1); step++) {
                        double perAgent = (SafetyIt.agentBytes(h[step]) - SafetyIt.agentBytes(h[step - 1])) / (double) n;
                        double growth = (SafetyIt.heapTotal(h[step]) - SafetyIt.heapTotal(h[step - 1])) / (double) n;
                        if (config.equals(BASELINE)) {
                            baseGrowth[step - 1] = growth;
                        }
                        String row = String.format("%s,%s,%d,%d,%s,%.0f,%.0f,%.0f,%s,%d", config,
                                args == null ? "(no agent)" : args.replace(',', ' '), n, step == 1 ? 0 : bytes,
                                step == 1 ? "idle" : "after-bulk", perAgent, growth,
                                growth - baseGrowth[step - 1], load, run);
                        rows.add(row);
                        System.out.println("[bench] " + row);
                        System.out.println("[bench]   largest per-connection growth by class, " + config + " "
                                + (step == 1 ? "idle" : "after-bulk") + ": " + topGrowth(h[step - 1], h[step], n));
                    }
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

    /** The agent's arguments of a configuration; null for a server without the agent. */
    static String agentArgs(String config) {
        switch (config) {
            case "none":
                return null;
            case BASELINE:
                return "cc=stock;measure=off;detect=off;log=warn;fix.kwik-stream-stall=on";
            case "stock-measure": // measured, no send-loop counters
                return "cc=stock;detect=off;log=warn;fix.kwik-stream-stall=on";
            case "stock-detect": // send-loop counters and the spin detector, not measured
                return "cc=stock;measure=off;log=warn;fix.kwik-stream-stall=on";
            default:
                return "cc=" + config + ";log=warn;fix.kwik-stream-stall=on";
        }
    }

    /** The 12 classes whose bytes grew most between two histograms, per connection. */
    private static String topGrowth(String before, String after, int n) {
        Map<String, Long> b = SafetyIt.bytesByClass(before);
        Map<String, Long> grown = new TreeMap<>();
        SafetyIt.bytesByClass(after).forEach((cls, bytes) -> grown.put(cls, bytes - b.getOrDefault(cls, 0L)));
        StringBuilder sb = new StringBuilder();
        grown.entrySet().stream().sorted((x, y) -> Long.compare(y.getValue(), x.getValue())).limit(12)
                .forEach(e -> sb.append(e.getKey()).append('=').append(e.getValue() / n).append(" B "));
        return sb.toString().trim();
    }
}
