package dev.ccagent.it.kwik;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Late attach with the real Attach API: a kwik server started without the agent serves a stock
 * transfer; the agent is loaded into it by pid; the next connection gets our controller (and the
 * stream-stall fix, retransformed into the already loaded class) and its transfer is intact.
 */
class KwikLateAttachTest {

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void newConnectionsUseTheAttachedAlgorithm() throws Exception {
        Path dir = KwikIt.workDir("late-attach");
        try (KwikIt.Server server = KwikIt.startServer(dir, "server", null)) {
            // before: stock, unpatched kwik: a stalled transfer is retried and counted (UnpatchedKwik)
            KwikIt.ClientRun before = KwikIt.runClient(dir, "client-before", null, Duration.ofSeconds(120),
                    UnpatchedKwik.overLoopback("--port", Integer.toString(server.port), "--mode", "down",
                            "--bytes", "1000000", "--seed", "1"));
            assertTrue(before.allOk(1), before.describe + server.jvm.describe());
            assertTrue(server.agentLines().isEmpty(), "no agent yet");

            KwikIt.attach(server.jvm.pid(), "cc=cubic;log=debug;fix.kwik-stream-stall=on");

            HeapClasses.During<KwikIt.ClientRun> d = HeapClasses.createdDuring(server.jvm.pid(), () ->
                    KwikIt.runClient(dir, "client-after", null, Duration.ofSeconds(120), "--port",
                            Integer.toString(server.port), "--mode", "down", "--bytes", "10000000", "--seed", "2"));
            KwikIt.ClientRun after = d.result();
            assertTrue(after.allOk(1), after.describe + server.jvm.describe());
            assertEquals(0, after.retries(), "the stream-stall fix was attached: no stalled attempt\n" + after.stdout);
            // the JDK's view of the server's heap: the connection after the attach got our CUBIC
            assertEquals(java.util.Set.of("cubic"), d.algorithms(), "controllers created: " + d.created());
            System.out.printf("[it] before attach: %d stalled attempt(s) of unpatched kwik%n", before.retries());

            String stderr = server.jvm.stderr();
            assertTrue(stderr.contains("installed on attach"), stderr);
            assertTrue(stderr.contains("tech.kwik.core.send.SenderImpl (retransformed)"), stderr);
            assertTrue(stderr.contains("tech.kwik.core.stream.StreamOutputStreamImpl (retransformed)"), stderr);
            List<Matcher> lines = KwikIt.connectionLines(stderr);
            assertEquals(1, lines.size(), "only the connection made after the attach: " + stderr);
            assertEquals(after.results.get(0).group(2), lines.get(0).group(2));
            assertEquals("cubic", lines.get(0).group(4));
            for (String line : server.agentLines()) {
                assertTrue(!line.contains(" WARN ") && !line.contains(" ERROR "), "agent complained: " + line);
            }
            System.out.printf("[it] after attach: cubic, %s bytes in %s s%n", after.results.get(0).group(4),
                    after.results.get(0).group(5));
        }
    }
}
