package dev.ccagent.it.kwik;

import dev.ccagent.it.Acceptance;
import dev.ccagent.it.emulator.LinkEmulator;
import dev.ccagent.it.emulator.LinkProfile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A real kwik server in a forked JVM with the agent at start, one checksummed download per algorithm,
 * and proof from outside the agent of which controller carried it: the server JVM's own heap histogram
 * ({@code jcmd GC.class_histogram}, see {@link HeapClasses}) shows that the download created the expected
 * algorithm's controller and none of the others; and at 1% loss the BBRs beat kwik's
 * NewReno by a large factor as measured by the client. The expected algorithms are named here, so an
 * algorithm dropped from the jar fails this test instead of silently leaving it.
 */
class KwikAlgorithmsTest {

    /** What the production jar must register, by name. */
    static final List<String> EXPECTED = List.of("newreno", "cubic", "reno-hbdp", "bbr1", "bbr3");

    static final long BYTES = 6_000_000;

    static Stream<String> algorithms() {
        List<String> names = new ArrayList<>();
        names.add("stock");
        names.addAll(EXPECTED);
        return names.stream();
    }

    @Test
    void theJarRegistersExactlyTheExpectedAlgorithms() {
        assertEquals(new TreeSet<>(EXPECTED), new TreeSet<>(AgentJar.algorithms()));
        assertEquals(new TreeSet<>(EXPECTED), new TreeSet<>(HeapClasses.ALGORITHM_CLASSES.keySet()));
    }

    @Acceptance("the real-kwik algorithm matrix: every algorithm on a forked server")
    @ParameterizedTest(name = "server cc={0}")
    @MethodSource("algorithms")
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void serverConnectionUsesTheConfiguredController(String algorithm) throws Exception {
        Path dir = KwikIt.workDir("algorithms-" + algorithm);
        try (KwikIt.Server server = KwikIt.startServer(dir, "server", "cc=" + algorithm + ";fix.kwik-stream-stall=on")) {
            HeapClasses.During<KwikIt.ClientRun> d = HeapClasses.createdDuring(server.jvm.pid(), () ->
                    KwikIt.runClient(dir, "client", null, Duration.ofSeconds(120), "--port", Integer.toString(server.port),
                            "--mode", "down", "--bytes", Long.toString(BYTES), "--seed", "7"));
            KwikIt.ClientRun run = d.result();
            assertTrue(run.allOk(1), "transfer not intact:\n" + run.describe + server.jvm.describe());
            assertEquals(Long.toString(BYTES), run.results.get(0).group(4));
            assertEquals(0, run.retries(), "the stream-stall fix is on: no stalled attempt\n" + run.stdout);

            // kwik builds its own NewReno for every connection; the agent replaces it with ours
            assertTrue(d.count(HeapClasses.KWIK_NEW_RENO) >= 1, "kwik's controller never created: " + d.created());
            assertEquals(algorithm.equals("stock") ? Set.of() : Set.of(algorithm), d.algorithms(),
                    "controllers created in the server's heap during the download");
            for (String line : server.agentLines()) {
                assertTrue(!line.contains(" WARN ") && !line.contains(" ERROR "), "agent complained: " + line);
            }
            System.out.printf("[it] server cc=%s: %s bytes in %s s (%s Mbit/s); heap: %s%n", algorithm,
                    run.results.get(0).group(4), run.results.get(0).group(5), run.results.get(0).group(6), d.algorithms());
        }
    }

    /**
     * Behaviour, measured by the client: at 1% random loss (20 Mbit/s, 50 ms) kwik's NewReno halves its
     * window on every loss while the BBRs keep their estimate; both BBRs must deliver at least 2.5× stock
     * (runs on a quiet machine show 6-9×).
     */
    @Acceptance("goodput ratio of each BBR against stock at 1% loss")
    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void bbrBeatsKwikNewRenoByALargeFactorAtOnePercentLoss() throws Exception {
        double stock = goodputAtLoss("stock");
        for (String bbr : List.of("bbr1", "bbr3")) {
            double g = goodputAtLoss(bbr);
            System.out.printf("[it] 1%% loss, 20 Mbit/s, 50 ms: %s %.2f Mbit/s, stock %.2f Mbit/s (%.1fx)%n",
                    bbr, g, stock, g / stock);
            assertTrue(g >= 2.5 * stock, bbr + " " + g + " Mbit/s against stock " + stock + " Mbit/s");
        }
    }

    private static double goodputAtLoss(String algorithm) throws Exception {
        Path dir = KwikIt.workDir("algorithms-loss-" + algorithm);
        try (KwikIt.Server server = KwikIt.startServer(dir, "server", "cc=" + algorithm + ";fix.kwik-stream-stall=on");
             LinkEmulator link = LinkEmulator.start(new InetSocketAddress("127.0.0.1", server.port),
                     LinkProfile.builder().delay(25_000_000).build(),
                     LinkProfile.builder().rate(20_000_000).delay(25_000_000).bufferBdp(1, 50_000_000).loss(0.01).build(), 5)) {
            KwikIt.ClientRun run = KwikIt.runClient(dir, "client", null, Duration.ofSeconds(150),
                    "--port", Integer.toString(link.port()), "--mode", "down", "--bytes", "2000000", "--seed", "3",
                    // a cold client JVM makes BBR measure the JIT, not the link (BENCHMARKS.md)
                    "--warmup-port", Integer.toString(server.port), "--warmup-bytes", "2000000");
            assertTrue(run.allOk(1), "transfer not intact:\n" + run.describe + server.jvm.describe());
            assertEquals(0, run.retries(), "the stream-stall fix is on: no stalled attempt\n" + run.stdout);
            return Double.parseDouble(run.results.get(0).group(6));
        }
    }
}
