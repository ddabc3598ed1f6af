package dev.ccagent.it.kwik;

import dev.ccagent.it.emulator.LinkEmulator;
import dev.ccagent.it.emulator.LinkProfile;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The link the application tests prove injection on, from outside: 20 Mbit/s, 50 ms RTT, a 1-BDP
 * drop-tail buffer and 1% random loss on the data (server to client) direction, through the user-space
 * emulator on 127.0.0.1. kwik's NewReno halves its window on every random loss and stays far below
 * the link rate there; BBRv1 does not treat random loss as congestion and fills it, so the goodput of
 * a short download tells from outside which controller the server used.
 */
final class LossyLink {

    static final long RATE = 20_000_000;
    static final long RTT_NANOS = 50_000_000;
    /**
     * bbr1 must beat stock by at least this factor. Measured in the gate (13 clean-clone runs, 2026-12-04; about
     * 90 ratios of the Spring Boot, Java 25 and OpenTelemetry tests): 5.3-13.5x, logs of the ratios 1.67-2.60 with a
     * spread of about 0.2. A ratio of 2 sits 6 of those spreads below the smallest mean: under 1e-8 a ratio under
     * a log-normal model, 1e-7 for a gate run's 7 ratios; we state 1e-5 a run for a heavier tail.
     */
    static final double FACTOR = 2.0;
    static final long WARMUP_BYTES = 2_000_000;
    /** Stall retries of a download from a server with the stream-stall fix (tests assert 0; see UnpatchedKwik otherwise). */
    static final int STALL_RETRIES = 9;

    private LossyLink() {
    }

    static LinkEmulator start(int serverPort, long seed) {
        LinkProfile toServer = LinkProfile.builder().rate(RATE).delay(RTT_NANOS / 2).bufferBdp(1.0, RTT_NANOS).build();
        LinkProfile toClient = LinkProfile.builder().rate(RATE).delay(RTT_NANOS / 2).bufferBdp(1.0, RTT_NANOS)
                .loss(0.01).build();
        return LinkEmulator.start(new InetSocketAddress("127.0.0.1", serverPort), toServer, toClient, seed);
    }

    /** One finished download: its goodput and how often the client retried a stall of an unpatched server. */
    record Download(double mbps, long bytes, int retries, String describe) {
    }

    /**
     * The stock baseline of a server that ccagent runs on (attached or at start): ccagent attached again with
     * {@code cc=stock} (the stream-stall fix stays on, so kwik's own race cannot stall the baseline), then a
     * {@link #download}; asserts that the agent logged the reconfigure. Had it not taken, the download would
     * run the algorithm before it, and the caller's goodput ratio fails.
     */
    static Download stockBaselineOnTheSameServer(Path dir, String name, KwikIt.Server server, long bytes, long seed)
            throws Exception {
        KwikIt.attach(server.jvm.pid(), "cc=stock;log=debug;fix.kwik-stream-stall=on");
        Download stock = download(dir, name, server.port, bytes, seed);
        assertTrue(server.jvm.stderr().contains("reconfigured on attach"), server.jvm.describe());
        return stock;
    }

    /**
     * A checksummed download of {@code bytes} from {@code serverPort}, whose kwik has ccagent's
     * stream-stall fix, through a fresh emulator; asserts it is intact. A stall is retried on a new
     * connection and counted (callers with the fix on assert that there were none).
     */
    static Download download(Path dir, String name, int serverPort, long bytes, long seed)
            throws IOException, InterruptedException {
        return download(dir, name, serverPort, bytes, seed, false);
    }

    /**
     * As {@link #download}, from a server that runs kwik as released (a stock baseline without ccagent):
     * kwik's own stream-send race stalls about one attempt in two, so stalls are declared and retried as
     * {@link UnpatchedKwik} says (counted and printed).
     */
    static Download downloadFromUnpatched(Path dir, String name, int serverPort, long bytes, long seed)
            throws IOException, InterruptedException {
        return download(dir, name, serverPort, bytes, seed, true);
    }

    private static Download download(Path dir, String name, int serverPort, long bytes, long seed, boolean unpatched)
            throws IOException, InterruptedException {
        try (LinkEmulator em = start(serverPort, seed)) {
            String linkStall = Integer.toString(unpatched ? UnpatchedKwik.LINK_STALL_SECONDS : 8);
            String allowed = Integer.toString(unpatched ? UnpatchedKwik.RETRIES : STALL_RETRIES);
            KwikIt.ClientRun run = KwikIt.runClient(dir, name, null, Duration.ofSeconds(unpatched ? 300 : 200),
                    "--port", Integer.toString(em.port()), "--mode", "down", "--bytes", Long.toString(bytes),
                    "--seed", Long.toString(seed), "--stall-seconds", linkStall, "--stall-retries", allowed,
                    // straight from the server first (not counted): a cold JVM makes BBR measure the JIT
                    "--warmup-port", Integer.toString(serverPort), "--warmup-bytes", Long.toString(WARMUP_BYTES),
                    "--warmup-stall-seconds", Integer.toString(unpatched ? UnpatchedKwik.LOOPBACK_STALL_SECONDS : 8),
                    "--warmup-stall-retries", allowed);
            assertTrue(run.allOk(1), "download not intact:\n" + run.describe);
            Matcher r = run.results.get(0);
            int retries = 0;
            for (String l : run.stdout.split("\n")) {
                if (l.startsWith("RETRY ")) {
                    retries++;
                }
            }
            double mbps = Double.parseDouble(r.group(6));
            System.out.printf(Locale.ROOT, "[it] %s: %s bytes in %s s = %.2f Mbit/s, retries %d, emulator to-client %s%n",
                    name, r.group(4), r.group(5), mbps, retries, em.toClientStats());
            return new Download(mbps, Long.parseLong(r.group(4)), retries, run.describe);
        }
    }

    static String load() {
        return String.format(Locale.ROOT, "load average %.2f",
                java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    }
}
