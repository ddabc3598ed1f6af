package dev.ccagent.it.kwik;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * kwik 0.10.9's stream-send race (StreamOutputStreamImpl.scheduleSendStreamFrameRequest) and the
 * agent's fix, on by default, reproduced deterministically: all three servers run the test-only
 * {@link StallWidener}, which pauses the writing thread for 2 ms between kwik queueing a send request
 * and counting it (timing only, no logic change). Four 2 MB downloads each; a transfer whose byte
 * count does not move for {@value #STALL_SECONDS} s is declared stalled.
 * <ul>
 *   <li>unpatched kwik: every transfer stalls (measured 4 of 4, at the first packet);</li>
 *   <li>the agent with the option not named (its default): none stalls, all intact (measured 0 of 4 with
 *       {@code =on}), and one start line says the fix is on by default, why, and how to turn it off;</li>
 *   <li>{@code fix.kwik-stream-stall=off}: kwik's class is not touched and transfers stall again.</li>
 * </ul>
 * Without the widener the race depends on the writer being preempted (or still interpreted) inside
 * a few instructions: on a loaded 2-core machine it froze 5 of 7 single 50 MB downloads, 4/4, 1/4,
 * 0/4 and 0/4 of four parallel 25 MB downloads in different runs, and 6 of ~22 small transfers on
 * freshly started servers; too erratic to assert on, hence the widener.
 */
class KwikStreamStallTest {

    static final int STALL_SECONDS = 5;
    static final int CONNECTIONS = 4;
    static final String BYTES = "2000000";

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void unpatchedKwikStallsTheDefaultFixPreventsItAndOffRestoresKwik() throws Exception {
        Path dir = KwikIt.workDir("stream-stall");
        try (KwikIt.Server server = KwikIt.awaitPort(KwikIt.launchServer(dir, "server-unpatched", null, true))) {
            KwikIt.ClientRun run = workload(dir, "client-unpatched", server);
            int stalls = count(run.stdout, "STALL ");
            System.out.printf("[it] stream stall: unpatched kwik, %d of %d transfers stalled%n", stalls, CONNECTIONS);
            assertTrue(server.jvm.stderr().contains("[stall-widener] widened tech.kwik.core.stream.StreamOutputStreamImpl"),
                    server.jvm.describe());
            // the widener holds kwik's race open: 4 of 4 stalled in all 26 such checks (15 unpatched, 11 with =off;
            // 2026-12-04); failing needs 3 of the 4 to escape it, none of 104 did: 4p^3 < 4e-6 a check at p < 0.01
            assertTrue(stalls >= CONNECTIONS / 2, "the reproduction did not reproduce:\n" + run.describe);
        }
        // the agent as an operator attaches it without naming the option: the fix is on, and says why
        try (KwikIt.Server server = KwikIt.awaitPort(KwikIt.launchServer(dir, "server-default", "log=debug", true))) {
            KwikIt.ClientRun run = workload(dir, "client-default", server);
            int stalls = count(run.stdout, "STALL ");
            System.out.printf("[it] stream stall: the agent's default, %d of %d transfers stalled%n", stalls, CONNECTIONS);
            String stderr = server.jvm.stderr();
            assertTrue(stderr.contains("[stall-widener] widened tech.kwik.core.stream.StreamOutputStreamImpl")
                    && stderr.contains("[ccagent] DEBUG instrumented tech.kwik.core.stream.StreamOutputStreamImpl"), stderr);
            assertTrue(java.util.regex.Pattern.compile("fix\\.kwik-stream-stall (for kwik|version) 0\\.10\\.9 in app@\\p{XDigit}+:"
                    + " applied \\(on by default: kwik's own stream-send race .*fix\\.kwik-stream-stall=off turns it off\\)")
                    .matcher(stderr).find(), "one start line says the fix is on, why, and how to turn it off:\n" + stderr);
            assertEquals(0, stalls, run.describe + server.jvm.describe());
            assertTrue(run.allOk(CONNECTIONS), run.describe + server.jvm.describe());
        }
        // fix.kwik-stream-stall=off: kwik's class is left as released, and the race is back
        try (KwikIt.Server server = KwikIt.awaitPort(KwikIt.launchServer(dir, "server-off",
                "fix.kwik-stream-stall=off;log=debug", true))) {
            KwikIt.ClientRun run = workload(dir, "client-off", server);
            int stalls = count(run.stdout, "STALL ");
            System.out.printf("[it] stream stall: fix.kwik-stream-stall=off, %d of %d transfers stalled%n", stalls, CONNECTIONS);
            String stderr = server.jvm.stderr();
            assertTrue(!stderr.contains("instrumented tech.kwik.core.stream.StreamOutputStreamImpl")
                    && !stderr.contains("fix.kwik-stream-stall for kwik") && !stderr.contains("fix.kwik-stream-stall version"),
                    stderr);
            // the widener holds kwik's race open: 4 of 4 stalled in all 26 such checks (15 unpatched, 11 with =off;
            // 2026-12-04); failing needs 3 of the 4 to escape it, none of 104 did: 4p^3 < 4e-6 a check at p < 0.01
            assertTrue(stalls >= CONNECTIONS / 2, "off did not restore kwik's own behaviour:\n" + run.describe);
        }
    }

    private static KwikIt.ClientRun workload(Path dir, String name, KwikIt.Server server) throws Exception {
        // the clients as released, without any agent, as the reproduction was measured (4 of 4 and 0 of 4)
        return KwikIt.runClient(dir, name, KwikIt.NO_AGENT, Duration.ofSeconds(150),
                "--port", Integer.toString(server.port), "--mode", "down", "--bytes", BYTES,
                "--connections", Integer.toString(CONNECTIONS), "--parallel", "2",
                "--stall-seconds", Integer.toString(STALL_SECONDS), "--seed", "11");
    }

    private static int count(String text, String what) {
        int n = 0;
        for (int i = text.indexOf(what); i >= 0; i = text.indexOf(what, i + 1)) {
            n++;
        }
        return n;
    }
}
