package dev.ccagent.it.kwik;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A real kwik server in a forked JVM with the agent at start, one checksummed 10 MB download per
 * algorithm (the server's controller carries the data), and the agent's per-connection log line as
 * proof of which controller the connection got. The stream-stall fix is on in every agent run
 * because unpatched kwik stalls often on a loaded 2-core machine (see KwikStreamStallTest).
 */
class KwikAlgorithmsTest {

    static final long BYTES = 10_000_000;

    /** stock plus every registered algorithm (bbr1/bbr3 join automatically when registered). */
    static Stream<String> algorithms() {
        List<String> names = new ArrayList<>();
        names.add("stock");
        names.addAll(AgentJar.algorithms());
        return names.stream();
    }

    @ParameterizedTest(name = "server cc={0}")
    @MethodSource("algorithms")
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void serverConnectionUsesTheConfiguredController(String algorithm) throws Exception {
        Path dir = KwikIt.workDir("algorithms-" + algorithm);
        try (KwikIt.Server server = KwikIt.startServer(dir, "server", "cc=" + algorithm + ";log=debug;fix.kwik-stream-stall=on")) {
            KwikIt.ClientRun run = KwikIt.runClient(dir, "client", null, Duration.ofSeconds(120),
                    "--port", Integer.toString(server.port), "--mode", "down", "--bytes", Long.toString(BYTES), "--seed", "7");
            assertTrue(run.allOk(1), "transfer not intact:\n" + run.describe + server.jvm.describe());
            Matcher result = run.results.get(0);
            assertEquals(Long.toString(BYTES), result.group(4));
            String odcid = result.group(2);

            String stderr = server.jvm.stderr();
            List<Matcher> lines = KwikIt.connectionLines(stderr);
            // cc=stock: kwik's own NewReno decides; with detection on (the default) the agent still
            // wraps it in its pass-through adapter to count send-loop events, and says so
            {
                assertEquals(1, lines.size(), "one connection line expected:\n" + stderr);
                Matcher l = lines.get(0);
                assertEquals("server", l.group(1));
                assertEquals(odcid, l.group(2), "the line names the client's connection id");
                assertEquals("default", l.group(3));
                assertEquals(algorithm, l.group(4));
            }
            for (String line : server.agentLines()) {
                assertTrue(!line.contains(" WARN ") && !line.contains(" ERROR "), "agent complained: " + line);
            }
            System.out.printf("[it] server cc=%s: %s bytes in %s s (%s Mbit/s)%n", algorithm, result.group(4),
                    result.group(5), result.group(6));
        }
    }

    /** The client side: kwik clients learn their connection id after the sender exists (lazy choice). */
    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void clientConnectionUsesTheConfiguredController() throws Exception {
        Path dir = KwikIt.workDir("algorithms-client");
        try (KwikIt.Server server = KwikIt.startServer(dir, "server", "cc=stock;fix.kwik-stream-stall=on")) {
            KwikIt.ClientRun run = KwikIt.runClient(dir, "client", "cc=cubic;log=debug;fix.kwik-stream-stall=on",
                    Duration.ofSeconds(120), "--port", Integer.toString(server.port), "--mode", "up",
                    "--bytes", Long.toString(BYTES), "--seed", "8");
            assertTrue(run.allOk(1), "transfer not intact:\n" + run.describe + server.jvm.describe());
            List<Matcher> lines = KwikIt.connectionLines(run.stderr);
            assertEquals(1, lines.size(), "one connection line expected:\n" + run.stderr);
            assertEquals("client", lines.get(0).group(1));
            assertEquals(run.results.get(0).group(2), lines.get(0).group(2), "lazy choice saw the real connection id");
            assertEquals("cubic", lines.get(0).group(4));
            for (String line : KwikIt.Server.agentLines(run.stderr)) {
                assertTrue(!line.contains(" WARN ") && !line.contains(" ERROR "), "agent complained: " + line);
            }
            System.out.printf("[it] client cc=cubic upload: %s bytes in %s s%n", run.results.get(0).group(4),
                    run.results.get(0).group(5));
        }
    }
}
