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
 * agent's opt-in fix. The same workload runs against a server with {@code fix.kwik-stream-stall=on}
 * and one without the agent: parallel downloads, each declared stalled when its byte count does not
 * move for {@value #STALL_SECONDS} s.
 *
 * <p>With the fix every transfer must complete intact; without it at least one of the four must
 * stall. Four parallel 25 MB transfers keep 2 cores busy enough (8+ kwik threads) that the writer is
 * preempted inside the race window: measured 4 of 4 stalled unpatched, 0 of 4 patched.
 */
class KwikStreamStallTest {

    static final int STALL_SECONDS = 8;
    static final int CONNECTIONS = 4;
    static final String BYTES = "25000000";

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void fixedServerNeverStalls() throws Exception {
        Path dir = KwikIt.workDir("stream-stall");
        int unfixedStalls;
        try (KwikIt.Server server = KwikIt.startServer(dir, "server-unfixed", null)) {
            KwikIt.ClientRun run = workload(dir, "client-unfixed", server);
            unfixedStalls = count(run.stdout, "STALL ");
            System.out.printf("[it] stream stall: without the fix %d of %d transfers stalled%n", unfixedStalls, CONNECTIONS);
            assertTrue(unfixedStalls >= 1, "the reproduction did not reproduce:\n" + run.describe);
        }
        try (KwikIt.Server server = KwikIt.startServer(dir, "server-fixed", "fix.kwik-stream-stall=on")) {
            KwikIt.ClientRun run = workload(dir, "client-fixed", server);
            int stalls = count(run.stdout, "STALL ");
            System.out.printf("[it] stream stall: with the fix %d of %d transfers stalled%n", stalls, CONNECTIONS);
            assertEquals(0, stalls, run.describe + server.jvm.describe());
            assertTrue(run.allOk(CONNECTIONS), run.describe + server.jvm.describe());
            assertTrue(server.jvm.stderr().contains("instrumented tech.kwik.core.stream.StreamOutputStreamImpl")
                    || server.agentLines().stream().noneMatch(l -> l.contains("WARN") || l.contains("ERROR")),
                    server.jvm.stderr());
        }
    }

    private static KwikIt.ClientRun workload(Path dir, String name, KwikIt.Server server) throws Exception {
        return KwikIt.runClient(dir, name, null, Duration.ofSeconds(200),
                "--port", Integer.toString(server.port), "--mode", "down", "--bytes", BYTES,
                "--connections", Integer.toString(CONNECTIONS), "--parallel", Integer.toString(CONNECTIONS),
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
