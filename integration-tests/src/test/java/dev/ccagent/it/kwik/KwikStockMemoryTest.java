package dev.ccagent.it.kwik;

import dev.ccagent.it.ForkedJvm;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The {@code cc=stock} decision of docs/safety.md, read from the server's heap with
 * {@code jcmd GC.class_histogram} (a full GC first): with {@code measure=off;detect=off} a stock
 * connection carries no agent object at all; with the defaults it is wrapped (measured and watched)
 * and its agent objects are the table's figure. {@link KwikHeapBench} measures the whole heap per
 * connection (arrays included) for every configuration.
 */
class KwikStockMemoryTest {

    private static final int CONNECTIONS = 40;

    @Test
    void stockConnectionsCarryNothingUnlessMeasuredOrWatched() throws Exception {
        Path dir = KwikIt.workDir("stock-memory");
        long unwrapped = agentBytesPerConnections(dir, "unwrapped", "cc=stock;measure=off;detect=off;log=warn");
        long wrapped = agentBytesPerConnections(dir, "defaults", "cc=stock;log=warn");
        System.out.println("[it] stock memory: agent objects for " + CONNECTIONS + " idle connections: "
                + unwrapped + " B with measure=off;detect=off, " + wrapped + " B with the defaults ("
                + wrapped / CONNECTIONS + " B a connection)");
        // exact byte counts of live objects, after one-time costs were paid by a warm-up: no chance element
        assertEquals(0, unwrapped, "measure=off;detect=off: the agent keeps no object per stock connection");
        // the defaults wrap each connection (1,696 B of agent objects measured 2026-12-05): the claim that
        // the price of measuring is ~1.7 kB of objects (+ ~5 kB of arrays), bounded both ways
        assertTrue(wrapped >= 1_000L * CONNECTIONS && wrapped <= 2_500L * CONNECTIONS,
                "the defaults: between 1,000 and 2,500 B of agent objects a stock connection, got " + wrapped / CONNECTIONS);
    }

    /** Growth of the agent's instance bytes while {@link #CONNECTIONS} idle connections open, after a warm-up. */
    private static long agentBytesPerConnections(Path dir, String name, String agentArgs) throws Exception {
        try (KwikIt.Server server = SafetyIt.startServer(dir, "server-" + name, agentArgs, List.of(),
                "--idle-seconds", "600")) {
            long pid = server.jvm.pid();
            SafetyIt.warmUp(dir, "warm-" + name, server.port, 5, 0);
            long before = SafetyIt.agentBytes(ForkedJvm.jcmd(pid, "GC.class_histogram"));
            try (ForkedJvm idle = SafetyIt.hold(dir, "idle-" + name, server.port, CONNECTIONS, 0)) {
                return SafetyIt.agentBytes(ForkedJvm.jcmd(pid, "GC.class_histogram")) - before;
            }
        }
    }
}
