package dev.ccagent.it.netty;

import dev.ccagent.it.AgentCli;
import dev.ccagent.it.ArmSeries;
import dev.ccagent.jfr.EventFields;
import dev.ccagent.jfr.EventNames;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.function.Executable;

import java.io.IOException;
import java.io.InputStream;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The checks of issue 21 on one packaged HTTP/3 server jar (the Spring Boot jar, the shaded Vert.x and Micronaut jars),
 * all from outside the server: downloads through the link emulator (20 Mbit/s, 50 ms RTT, 2-BDP buffer,
 * 1% loss towards the client) by a client in its own JVM, checked by SHA-256.
 * <ul>
 *   <li>{@link #lateAttach}: a bare server's downloads, then the CLI's {@code attach PID netty.cc=bbr}
 *       and the same downloads: BBR's standing queue at the bottleneck after, not before
 *       ({@link #BBR_QUEUE_P50_MS}); {@code status}: 0 fallbacks;</li>
 *   <li>{@link #atStart}: {@code -javaagent:ccagent.jar=netty.cc=bbr}: BBR's standing queue, not in the jar's
 *       stock run; with {@code netty.pacing=on} the emulator's bottleneck queue p50 at most half
 *       of unpaced; a close {@code ConnectionSummary} per server connection (the JDK's parser) whose bytes
 *       agree with the client's; each server connection's {@code CongestionState} samples through its life
 *       ({@link #MAX_SAMPLE_GAP_MS}), a download's counting its losses; spin monitoring's send-path windows
 *       ({@code SendPathAllocation}) of the event loop, charged per loop; the Prometheus JMX exporter's per-arm
 *       series equal to the recording's;
 *       {@code status}: 0 fallbacks.</li>
 * </ul>
 * Each scenario checks everything and reports every failed assertion together ({@code assertAll}).
 */
final class PackagedHttp3Jar {

    /**
     * RATE,DELAY_MS (each way),BDP,LOSS: 20 Mbit/s, 50 ms RTT, a 2-BDP buffer (100 ms), 1% loss towards the
     * client. The buffer was 1 BDP until 2026-12-06; see {@link #BBR_QUEUE_P50_MS} for why it is 2 now.
     */
    static final String LINK = "20000000,25,2,0.01";
    static final int CONNECTIONS = 2;
    /**
     * Goodput of bbr over stock at 1% loss is printed, not asserted: the 3x (measured with ngtcp2's
     * client, 10 MB) does not hold for these transfers. quiche's cubic, the stock here, got 4.1-14.0 Mbit/s
     * over 2 x 3 MB at 1% loss on the 1-BDP buffer (its slow start before the first losses carries much of a
     * short download), bbr 9.1-17.9, so single runs ranged 0.88-3.6x (docs/compatibility-netty.md lists them).
     */
    static final long BYTES = 3_000_000;
    static final long WARMUP = 1_000_000;
    /**
     * The witness that quiche's BBR runs, from outside: the median wait in the emulator's bottleneck queue
     * (towards the client) is at least this with bbr unpaced and below it in the stock run (quiche's cubic).
     * Unpaced, BBR keeps its window of 2 estimated BDPs in flight, so about 1 BDP (50 ms) stands in the queue.
     * The 2-BDP buffer holds that without overflow, so bbr2's loss response does not cut the window.
     * Measured on this link (2026-12-06, load average 0.9-7.3): bbr unpaced 51.5-65.0 ms in 28 runs; the stock
     * runs, which use seed 1's loss pattern, 0.5-3.4 ms in 11 runs (0.5-5.4 ms in 14 more on the 1-BDP buffer).
     * Odds of a false failure: bbr is 8.3 standard deviations above the bound (mean 56.2, sd 3.2); stock is 5.8
     * standard deviations below it on a log scale (a log-normal fit of the 25 seed-1 runs): each below 1e-7 a
     * run. A server where the agent did nothing fails: cubic with the bbr runs' seeds (12, 21) gave 0.4-5.1 ms.
     * <p>
     * Why the buffer and the seed. On the 1-BDP buffer, unpaced BBR overflowed the buffer and bbr2 cut its
     * window on the loss: its median ranged 25.9-47.3 ms. The old witness, overflow drops (at least 50 for
     * bbr, fewer for stock), failed when quiche's cubic overshot (65 and 194 drops). The seed matters for
     * cubic: with seed 11 (no loss from the 461st to the 1,115th datagram) its median reached 14.7 ms on the
     * 1-BDP buffer and 34.5 ms (102 drops) on the 2-BDP one; the late-attach run's bare server used seed 11
     * until 2026-12-06 and uses seed 1 now, as the at-start stock run always did. The drops are still printed.
     */
    static final double BBR_QUEUE_P50_MS = 30;

    /**
     * The largest gap allowed between a server connection's path-stats samples (every 100 ms) in the at-start
     * recording. Measured in the Spring Boot jar (2026-12-07, stock, 10 MB at 1% loss, 5 recordings, the
     * machine up to 100% busy): at most 1.58 s. A stopped sampling task leaves a gap of the rest of the
     * connection's life, which lasts until the client's 15 s idle timeout.
     */
    static final long MAX_SAMPLE_GAP_MS = 5_000;

    final String name;
    final Path jar;
    final Function<Path, List<String>> appArgs;
    private Http3Downloads.Run stock;

    /** {@code appArgs}: the application's arguments for a key store. */
    PackagedHttp3Jar(String name, String jarProperty, Function<Path, List<String>> appArgs) {
        this.name = name;
        this.jar = PackagedServer.jar(jarProperty);
        this.appArgs = appArgs;
    }

    Path dir() throws IOException {
        Path d = NettyApp.WORK.resolve(name).toAbsolutePath();
        Files.createDirectories(d);
        return d;
    }

    /** The operator CLI of the packaged agent jar, its output in {@link #dir()}. */
    AgentCli.Result cli(String run, String... args) throws IOException, InterruptedException {
        return AgentCli.run(PackagedServer.agentJar(), AgentCli.currentJava(), List.of(), dir(), run, args);
    }

    PackagedServer server(String run, String agentArgs, String exporter) throws Exception {
        return PackagedServer.start(dir(), run, jar, appArgs.apply(NettyApp.keystore()), agentArgs, exporter);
    }

    Http3Downloads.Run download(String run, PackagedServer server, long seed) throws Exception {
        return download(run, server, LINK, CONNECTIONS, BYTES, seed);
    }

    /** As {@link #download(String, PackagedServer, long)} through another link, size and count (same warm-up). */
    Http3Downloads.Run download(String run, PackagedServer server, String link, int connections, long bytes, long seed)
            throws Exception {
        return Http3Downloads.run(dir(), run, server.port, link, connections, bytes, WARMUP, seed);
    }

    /** The jar's stock goodput in this test run: measured once, on the first bare server a scenario starts. */
    synchronized Http3Downloads.Run stock() throws Exception {
        if (stock == null) {
            try (PackagedServer s = server("server-stock", null, null)) {
                stock = download("client-stock", s, 1);
            }
        }
        return stock;
    }

    void lateAttach() throws Exception {
        Http3Downloads.Run before;
        Http3Downloads.Run late;
        AgentCli.Result attach;
        AgentCli.Result status;
        String log;
        try (PackagedServer s = server("server-late", null, null)) {
            // seed 1, as the stock run: see BBR_QUEUE_P50_MS
            before = download("client-before-attach", s, 1);
            synchronized (this) {
                if (stock == null) {
                    stock = before;
                }
            }
            String pid = Long.toString(s.jvm.pid());
            attach = cli("attach", "attach", pid, "netty.cc=bbr;log=debug");
            late = download("client-late", s, 12);
            status = cli("status-late", "status", pid);
            log = s.jvm.stderr();
        }
        Http3Downloads.Run base = stock();
        String figures = String.format(Locale.ROOT, "%s: stock %.2f (this server before the attach %.2f), after attach"
                        + " netty.cc=bbr %.2f Mbit/s (%.2fx); bottleneck queue p50 before %.1f ms, after %.1f ms (drops %.0f,"
                        + " %.0f; load average %.2f)", name, base.mbps(), before.mbps(), late.mbps(), late.mbps() / base.mbps(),
                before.queueP50Ms(), late.queueP50Ms(), before.queueDrops(), late.queueDrops(), loadAverage());
        System.out.println("[it] " + figures);
        String agentSaid = verdicts(log);
        assertAll(name + " late attach",
                () -> assertEquals(0, attach.exit(), attach.all()),
                () -> assertEquals(0, status.exit(), status.all()),
                () -> assertTrue(status.out().contains("fallbacks:     0"), "fallbacks in status:\n" + status.out()),
                () -> assertTrue(late.queueP50Ms() >= BBR_QUEUE_P50_MS && before.queueP50Ms() < BBR_QUEUE_P50_MS,
                        "the bottleneck queue's median wait should show BBR after the attach (at least " + BBR_QUEUE_P50_MS
                                + " ms) and not before (below it): before " + before.queue() + "; after " + late.queue()
                                + "\n" + figures + "\nthe agent said:" + agentSaid));
    }

    void atStart() throws Exception {
        Path rec = dir().resolve("bbr-unpaced.jfr");
        Files.deleteIfExists(rec);
        Path config = dir().resolve("ccagent.yml");
        try (InputStream in = PackagedHttp3Jar.class.getResourceAsStream("/prometheus/ccagent.yml")) {
            assertNotNull(in, "prometheus/ccagent.yml not on the test class path");
            Files.copy(in, config, StandardCopyOption.REPLACE_EXISTING);
        }
        int metricsPort = freePort();
        String exporter = PackagedServer.jar("prometheus.agent.jar") + "=127.0.0.1:" + metricsPort + ":" + config;
        Http3Downloads.Run base = stock();
        Http3Downloads.Run unpaced;
        Map<String, Double> scraped;
        AgentCli.Result status;
        int exit;
        String log;
        try (PackagedServer s = server("server-bbr-unpaced",
                "netty.cc=bbr;netty.pacing=off;netty.stats.period=100ms;jfr=" + rec, exporter)) {
            unpaced = download("client-bbr-unpaced", s, 21);
            scraped = scrapeWhenClosed(metricsPort);
            status = cli("status-bbr", "status", Long.toString(s.jvm.pid()));
            exit = s.stop();
            log = s.jvm.stderr();
        }
        Http3Downloads.Run paced;
        try (PackagedServer s = server("server-bbr-paced", "netty.cc=bbr;netty.pacing=on;netty.stats.period=100ms", null)) {
            paced = download("client-bbr-paced", s, 31);
        }
        String figures = String.format(Locale.ROOT, "%s: stock %.2f, at start netty.cc=bbr %.2f Mbit/s (%.2fx);"
                        + " bottleneck queue p50 stock %.2f ms, paced %.2f ms, unpaced %.2f ms (drops %.0f, %.0f, %.0f;"
                        + " load average %.2f)", name, base.mbps(), unpaced.mbps(), unpaced.mbps() / base.mbps(),
                base.queueP50Ms(), paced.queueP50Ms(), unpaced.queueP50Ms(), base.queueDrops(), paced.queueDrops(),
                unpaced.queueDrops(), loadAverage());
        System.out.println("[it] " + figures + "\n  paced:   " + paced.figures() + "\n  unpaced: " + unpaced.figures());
        String agentSaid = verdicts(log);

        List<Executable> checks = new ArrayList<>();
        checks.add(() -> assertEquals(0, exit, "the server's clean exit"));
        checks.add(() -> assertTrue(unpaced.queueP50Ms() >= BBR_QUEUE_P50_MS && base.queueP50Ms() < BBR_QUEUE_P50_MS,
                "the bottleneck queue's median wait should show BBR at start (at least " + BBR_QUEUE_P50_MS
                        + " ms) and not in the stock run (below it): stock " + base.queue() + "; bbr unpaced "
                        + unpaced.queue() + "\n" + figures + "\nthe agent said:" + agentSaid));
        checks.add(() -> assertTrue(paced.queueP50Ms() <= 0.5 * unpaced.queueP50Ms(),
                "netty.pacing=on did not halve the bottleneck queue's p50: paced " + paced.queue() + "; unpaced "
                        + unpaced.queue() + "\n" + figures + "\nthe agent said:" + agentSaid));
        checks.add(() -> assertEquals(0, status.exit(), status.all()));
        checks.add(() -> assertTrue(status.out().contains("fallbacks:     0"), "fallbacks in status:\n" + status.out()));
        // the recording, read with the JDK's parser: the server's connections, their close summaries
        Map<String, RecordedEvent> assigned = new HashMap<>();
        Map<String, RecordedEvent> closed = new HashMap<>();
        List<String> twice = new ArrayList<>();
        Map<String, List<RecordedEvent>> states = new HashMap<>();
        List<RecordedEvent> loopAllocation = new ArrayList<>();
        int spins = 0;
        for (RecordedEvent e : RecordingFile.readAllEvents(rec)) {
            String type = e.getEventType().getName();
            if (type.equals(EventNames.SEND_PATH_ALLOCATION) && "netty".equals(e.getString(EventFields.LIBRARY))) {
                loopAllocation.add(e);
                continue;
            }
            if (type.equals(EventNames.CPU_SPIN) || type.equals(EventNames.SEND_LOOP_SPIN)) {
                spins++;
            }
            if (type.equals(EventNames.CONGESTION_STATE) && "netty".equals(e.getString(EventFields.LIBRARY))) {
                states.computeIfAbsent(e.getString(EventFields.CONNECTION_ID), k -> new ArrayList<>()).add(e);
                continue;
            }
            if (!(type.equals(EventNames.ALGORITHM_ASSIGNED) || type.equals(EventNames.CONNECTION_SUMMARY))
                    || !"netty".equals(e.getString(EventFields.LIBRARY)) || !"server".equals(e.getString(EventFields.ROLE))) {
                continue;
            }
            if (type.equals(EventNames.ALGORITHM_ASSIGNED)) {
                assigned.put(e.getString(EventFields.CONNECTION_ID), e);
            } else if (type.equals(EventNames.CONNECTION_SUMMARY) && e.getString(EventFields.TRIGGER).equals("close")) {
                if (closed.put(e.getString(EventFields.CONNECTION_ID), e) != null) {
                    twice.add(e.getString(EventFields.CONNECTION_ID));
                }
            }
        }
        long clientBytes = CONNECTIONS * BYTES + WARMUP;
        long acked = closed.values().stream().mapToLong(e -> e.getLong(EventFields.BYTES_ACKED)).sum();
        checks.add(() -> assertEquals(CONNECTIONS + 1, assigned.size(), "AlgorithmAssigned per server connection"
                + " (the downloads and the warm-up): " + assigned.keySet()));
        checks.add(() -> assertTrue(assigned.values().stream().allMatch(e -> e.getString(EventFields.ALGORITHM)
                .equals("bbr2_gcongestion") && e.getString(EventFields.REASON).equals("forced")), "bbr forced: " + assigned.values()));
        checks.add(() -> assertEquals(assigned.keySet(), closed.keySet(), "a close ConnectionSummary per server connection"
                + "\nthe agent said:" + agentSaid));
        checks.add(() -> assertTrue(twice.isEmpty(), "two close summaries for " + twice));
        checks.add(() -> assertTrue(closed.values().stream().allMatch(e -> e.getString(EventFields.CONTROLLER).equals("ccagent")
                && e.getString(EventFields.ALGORITHM).equals("bbr2_gcongestion") && e.getLong(EventFields.RTT_SAMPLES) > 0),
                "close summaries: " + closed.values()));
        // the last path-stats sample before the close (at most 100 ms old): most of what the clients received
        checks.add(() -> assertTrue(acked >= 0.8 * clientBytes && acked <= 1.15 * clientBytes,
                "the summaries' bytes acknowledged " + acked + " vs the clients' " + clientBytes));
        // the path-stats samples (netty.stats.period=100ms) of each server connection, from its assignment to
        // its close: no gap of seconds (the per-connection task stopped, or the connection left the live table),
        // and each download's samples count its losses (1% loss on about 2,700 packets)
        List<String> sampling = new ArrayList<>();
        boolean sampledThroughout = true;
        for (Map.Entry<String, RecordedEvent> a : assigned.entrySet()) {
            RecordedEvent close = closed.get(a.getKey());
            List<RecordedEvent> own = states.getOrDefault(a.getKey(), List.of());
            own.sort(java.util.Comparator.comparing(RecordedEvent::getStartTime));
            long maxGapMs = 0;
            java.time.Instant previous = a.getValue().getStartTime();
            for (RecordedEvent e : own) {
                maxGapMs = Math.max(maxGapMs, Duration.between(previous, e.getStartTime()).toMillis());
                previous = e.getStartTime();
            }
            if (close != null) {
                maxGapMs = Math.max(maxGapMs, Duration.between(previous, close.getStartTime()).toMillis());
            }
            long lost = own.stream().mapToLong(e -> e.getLong(EventFields.PACKETS_LOST)).max().orElse(-1);
            boolean download = close != null && close.getLong(EventFields.BYTES_SENT) >= 0.8 * BYTES;
            sampledThroughout &= close != null && own.size() >= 2 && maxGapMs <= MAX_SAMPLE_GAP_MS && (!download || lost > 0);
            sampling.add(String.format(Locale.ROOT, "%s%s: %d samples, largest gap %d ms, packets lost %d (close summary %d)",
                    a.getKey(), download ? " (download)" : "", own.size(), maxGapMs, lost,
                    close != null ? close.getLong(EventFields.PACKETS_LOST) : -1));
        }
        boolean sampledOk = sampledThroughout;
        // spin monitoring's send-path windows: the detector's hooks on Netty's event loop ran in this jar, each
        // window charged to its loop (no connection id), one of them over the downloads' datagrams
        String allocation = loopAllocation.stream().map(e -> String.format(Locale.ROOT, "%s %s: %d datagrams, %d loop connections, connection '%s'",
                e.getString(EventFields.PATH), e.getString(EventFields.THREAD_NAME), e.getLong(EventFields.PACKETS),
                e.getInt(EventFields.LOOP_CONNECTION_COUNT), e.getString(EventFields.CONNECTION_ID))).reduce("", (a, b) -> a + "\n  " + b);
        System.out.println("[it] " + name + ": " + loopAllocation.size() + " SendPathAllocation windows, " + spins
                + " CpuSpin/SendLoopSpin events" + allocation);
        checks.add(() -> assertTrue(!loopAllocation.isEmpty() && loopAllocation.stream().allMatch(e -> "event loop".equals(e.getString(EventFields.PATH))
                        && e.getString(EventFields.CONNECTION_ID).isEmpty() && e.getInt(EventFields.LOOP_CONNECTION_COUNT) >= 1)
                        && loopAllocation.stream().anyMatch(e -> e.getLong(EventFields.PACKETS) > 100),
                "SendPathAllocation windows of the event loop, per loop, one over 100 datagrams:" + allocation
                        + "\nthe agent said:" + agentSaid));
        checks.add(() -> assertTrue(sampledOk, "CongestionState every netty.stats.period through each server connection's"
                + " life (no gap over " + MAX_SAMPLE_GAP_MS + " ms) and losses in each download's: " + sampling));
        // Prometheus: the exporter's netty series count the recording's server connections (AlgorithmAssigned,
        // which runs in every loader) and equal the close summaries' sums
        checks.add(() -> assertEquals((double) assigned.size(), sum(scraped, "ccagent_arm_connections"), "connections " + scraped));
        checks.add(() -> assertEquals((double) assigned.size(), sum(scraped, "ccagent_arm_closedconnections"), "closed " + scraped));
        checks.add(() -> assertEquals(0.0, sum(scraped, "ccagent_arm_openconnections"), "open " + scraped));
        checks.add(() -> assertEquals((double) acked, sum(scraped, "ccagent_arm_bytesacked"), "bytes acked " + scraped));
        checks.add(() -> assertTrue(sum(scraped, "ccagent_arm_bytesacked") >= 0.8 * clientBytes,
                "exported bytes acked " + sum(scraped, "ccagent_arm_bytesacked") + " vs the clients' " + clientBytes));
        checks.add(() -> assertTrue(scraped.keySet().stream().filter(k -> k.startsWith("ccagent_arm_connections{"))
                .allMatch(k -> k.contains("arm=\"default\"")), "only the default arm: " + scraped.keySet()));
        assertAll(name + " at start", checks.stream());
    }

    /** The agent's verdicts and warnings about Netty in a server's log (not its per-connection debug lines). */
    static String verdicts(String log) {
        return log.lines().filter(l -> l.contains("[ccagent]") && l.contains("netty") && !l.contains(" DEBUG "))
                .reduce("", (a, b) -> a + "\n  " + b);
    }

    /** The sum of a series over the arms with {@code library="netty"}. */
    static double sum(Map<String, Double> scraped, String series) {
        return scraped.entrySet().stream().filter(e -> e.getKey().startsWith(series + "{")
                && e.getKey().contains("library=\"netty\"")).mapToDouble(Map.Entry::getValue).sum();
    }

    /**
     * Scrapes the exporter until some netty connection was counted and none is open (the close summary is
     * written when quiche's stats find the channel closed: up to the 15 s idle timeout after a client's JVM
     * ends), bounded; returns name{sorted labels} -> value.
     */
    static Map<String, Double> scrapeWhenClosed(int port) throws Exception {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(40);
        Map<String, Double> last = Map.of();
        while (System.nanoTime() < deadline) {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode(), r.body());
            last = ArmSeries.parse(r.body());
            if (sum(last, "ccagent_arm_connections") > 0 && sum(last, "ccagent_arm_openconnections") == 0) {
                return last;
            }
            Thread.sleep(500);
        }
        return last;
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            return s.getLocalPort();
        }
    }

    static double loadAverage() {
        return java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    }
}
