package dev.ccagent.it.kwik;

import dev.ccagent.it.Acceptance;
import dev.ccagent.jfr.EventFields;
import dev.ccagent.jfr.EventNames;
import dev.ccagent.it.emulator.LinkEmulator;
import dev.ccagent.it.emulator.LinkProfile;
import dev.ccagent.report.stats.Quantiles;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The canary decision end to end: real kwik servers with the agent, real kwik clients in forked JVMs,
 * every connection through the link emulator, and the {@code report} of the jar under test over the
 * server's recording.
 * <ul>
 *   <li>A/B: {@code canary=bbr1:50%} against kwik's own controller (the default arm, {@code cc=stock})
 *       at 1% loss, 20 Mbit/s, 50 ms: the report says "better" for bbr1 goodput with a confidence
 *       interval of the ratio of medians above 1; the stock arm's goodput is non-zero and agrees with
 *       what the clients measured for the same connections (mean per connection within 10%);</li>
 *   <li>A/A: {@code cc=cubic;canary=cubic:50%}, two runs with different canary salts and client seeds:
 *       "no detectable difference" for goodput each time (not "not enough data": enough connections).</li>
 * </ul>
 * Each emulator is one path: {@link #LINKS} emulators carry the parallel connections, so concurrent
 * connections mostly do not share a bottleneck (as connections of a fleet do not).
 */
@Acceptance("A/A canaries and the report verdict over several links and seeds")
class KwikCanaryVerdictTest {

    static final int LINKS = 4;
    static final long RTT_NANOS = 50_000_000L;
    static final Pattern WARMUP = Pattern.compile(
            "^WARMUP conn=-1 odcid=(\\S+) mode=down bytes=(\\d+) seconds=([\\d.]+) mbps=[\\d.]+ ok=true", Pattern.MULTILINE);

    /** One run: the clients' figures per connection id and the server's recording. */
    static final class Run {
        final Map<String, double[]> client = new TreeMap<>(); // connection id -> bytes, seconds
        final Map<String, String> arm = new HashMap<>(); // connection id -> "label algorithm" of its close summary
        Path recording;
        long retries;
        double seconds;
    }

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void bbr1AgainstStockAtOnePercentLossIsBetterAndTheStockArmAgreesWithItsClients() throws Exception {
        LinkProfile down = LinkProfile.builder().rate(20_000_000).delay(RTT_NANOS / 2).loss(0.01)
                .bufferBdp(1, RTT_NANOS).build();
        LinkProfile up = LinkProfile.builder().rate(20_000_000).delay(RTT_NANOS / 2).build();
        String args = "cc=stock;canary=bbr1:50%;fix.kwik-stream-stall=on";
        Run run = run("canary-verdict-ab", args, down, up, 40, 600_000, 500);
        FleetReportJar report = FleetReportJar.read(List.of(run.recording), 1);
        report.verdicts.forEach(v -> System.out.println("[it] canary-verdict A/B: " + v));

        FleetReportJar.Verdict goodput = report.verdict("canary bbr1", "goodput");
        assertEquals("default stock", report.baseline, "baseline arm");
        assertEquals("better", goodput.verdict, goodput.toString());
        assertTrue(goodput.ciLow > 1, goodput.toString());

        // the stock arm: the report's per-connection goodput against the clients' own clocks and byte counts
        List<String> stockIds = run.arm.entrySet().stream().filter(e -> e.getValue().equals("default stock"))
                .map(Map.Entry::getKey).sorted().collect(Collectors.toList());
        double[] reported = report.goodput.get("default stock");
        assertNotNull(reported, "no stock arm in the report: " + report.goodput.keySet());
        assertEquals(stockIds.size(), reported.length, "stock connections in the report vs the recording");
        assertTrue(stockIds.size() >= 8, "stock connections " + stockIds.size());
        double[] measured = stockIds.stream().mapToDouble(id -> run.client.get(id)[0] * 8 / run.client.get(id)[1])
                .sorted().toArray();
        assertTrue(reported[0] > 0, "a stock connection with no goodput: " + Arrays.toString(reported));
        double reportMean = Arrays.stream(reported).average().orElse(0);
        double clientMean = Arrays.stream(measured).average().orElse(0);
        double reportMedian = Quantiles.ofSorted(reported, 0.5);
        double clientMedian = Quantiles.ofSorted(measured, 0.5);
        System.out.printf("[it] canary-verdict A/B stock arm (%d connections): report mean %.2f median %.2f Mbit/s; "
                        + "clients mean %.2f median %.2f Mbit/s (%+.1f%% / %+.1f%%); bbr1 arm median %.2f Mbit/s; "
                        + "%d retries; %.1f s%n",
                reported.length, reportMean * 1e-6, reportMedian * 1e-6, clientMean * 1e-6, clientMedian * 1e-6,
                100 * (reportMean / clientMean - 1), 100 * (reportMedian / clientMedian - 1),
                Quantiles.ofSorted(report.goodput.get("canary bbr1"), 0.5) * 1e-6, run.retries, run.seconds);
        assertTrue(Math.abs(reportMean / clientMean - 1) <= 0.10, String.format(
                "stock arm mean goodput: report %.3f vs clients %.3f Mbit/s", reportMean * 1e-6, clientMean * 1e-6));
    }

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void theSameAlgorithmInBothArmsIsNoDetectableDifferenceOnTwoSeeds() throws Exception {
        LinkProfile down = LinkProfile.builder().rate(50_000_000).delay(10_000_000).bufferBdp(1, 20_000_000).build();
        LinkProfile up = LinkProfile.builder().rate(50_000_000).delay(10_000_000).build();
        for (int seed = 1; seed <= 2; seed++) {
            String args = "cc=cubic;canary=cubic:50%;fix.kwik-stream-stall=on;canary.salt=aa-test-salt-" + seed;
            Run run = run("canary-verdict-aa-" + seed, args, down, up, 40, 300_000, 700 + 100 * seed);
            FleetReportJar report = FleetReportJar.read(List.of(run.recording), seed);
            report.verdicts.forEach(v -> System.out.println("[it] canary-verdict A/A seed " + v));
            assertEquals("default cubic", report.baseline, "baseline arm");
            FleetReportJar.Verdict goodput = report.verdict("canary cubic", "goodput");
            System.out.printf("[it] canary-verdict A/A run %d: %s; %.1f s%n", seed, goodput, run.seconds);
            assertEquals("no detectable difference", goodput.verdict, "run " + seed + ": " + goodput);
        }
    }

    /**
     * One server with {@code agentArgs} (and a recording), {@link #LINKS} emulators in front of it, one
     * client JVM: a warm-up download through the first emulator, then {@code connections} downloads of
     * {@code bytes}, {@link #LINKS} at a time. Every transfer intact, no stalled attempt (the fix is on),
     * one close summary per connection on the arm the selector predicts.
     */
    static Run run(String name, String agentArgs, LinkProfile down, LinkProfile up, int connections, long bytes,
                   long seed) throws Exception {
        long t0 = System.nanoTime();
        Run out = new Run();
        Path dir = KwikIt.workDir(name);
        Path rec = KwikIt.freshFile(dir, "server.jfr");
        String args = agentArgs + ";jfr=" + rec;
        KwikIt.ClientRun client;
        try (KwikIt.Server server = KwikIt.startServer(dir, "server", args)) {
            List<LinkEmulator> links = new ArrayList<>();
            try {
                for (int i = 0; i < LINKS; i++) {
                    links.add(LinkEmulator.start(new InetSocketAddress("127.0.0.1", server.port), up, down, seed + i));
                }
                String ports = links.stream().map(l -> Integer.toString(l.port())).collect(Collectors.joining(","));
                client = KwikIt.runClient(dir, "client", null, Duration.ofSeconds(180),
                        "--port", ports, "--mode", "down", "--bytes", Long.toString(bytes),
                        "--connections", Integer.toString(connections), "--parallel", Integer.toString(LINKS),
                        "--seed", Long.toString(seed), "--stall-seconds", "20", "--stall-retries", "1",
                        // one download first, alone: JIT-compiles both ends (measured like the others)
                        "--warmup-port", Integer.toString(links.get(0).port()), "--warmup-bytes", "1000000");
            } finally {
                for (LinkEmulator l : links) {
                    l.close();
                }
            }
            assertTrue(client.allOk(connections), "transfers not all intact:\n" + client.describe + server.jvm.describe());
            server.jvm.closeStdin();
            assertEquals(0, server.jvm.waitFor(Duration.ofSeconds(60)), server.jvm.describe());
        }
        out.retries = client.retries();
        assertEquals(0, out.retries, "the stream-stall fix is on: no stalled attempt\n" + client.stdout);
        for (Matcher m : client.results) {
            out.client.put(m.group(2), new double[] {Long.parseLong(m.group(4)), Double.parseDouble(m.group(5))});
        }
        Matcher warm = WARMUP.matcher(client.stdout);
        assertTrue(warm.find(), "no WARMUP line:\n" + client.stdout);
        out.client.put(warm.group(1), new double[] {Long.parseLong(warm.group(2)), Double.parseDouble(warm.group(3))});
        assertEquals(connections + 1, out.client.size(), "distinct connection ids");

        // the recording, read with the JDK's parser: one close summary per client connection, on its predicted arm
        assertTrue(Files.size(rec) > 0, "no recording at " + rec);
        for (RecordedEvent e : RecordingFile.readAllEvents(rec)) {
            if (e.getEventType().getName().equals(EventNames.CONNECTION_SUMMARY) && e.getString(EventFields.ROLE).equals("server")
                    && e.getString(EventFields.TRIGGER).equals("close")) {
                String id = e.getString(EventFields.CONNECTION_ID);
                String arm = e.getString(EventFields.CANARY_ARM) + " " + e.getString(EventFields.ALGORITHM);
                assertEquals(null, out.arm.put(id, arm), "two close summaries for " + id);
                String[] predicted = AgentJar.predictArm(args, HexFormat.of().parseHex(id));
                assertEquals(predicted[0] + " " + predicted[1], arm, "arm of " + id);
            }
        }
        assertEquals(out.client.keySet(), new java.util.TreeSet<>(out.arm.keySet()), "close summaries vs client connections");
        out.recording = rec;
        out.seconds = (System.nanoTime() - t0) / 1e9;
        Map<String, Long> perArm = out.arm.values().stream().collect(Collectors.groupingBy(a -> a, TreeMap::new,
                Collectors.counting()));
        System.out.printf("[it] %s: %s connections per arm, %.1f s%n", name, perArm, out.seconds);
        return out;
    }
}
