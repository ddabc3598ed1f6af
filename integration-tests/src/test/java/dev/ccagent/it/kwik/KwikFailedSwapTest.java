package dev.ccagent.it.kwik;

import dev.ccagent.it.ForkedJvm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A controller swap that fails (issue #24), forced from outside with the test-only
 * {@code -Dccagent.test.kwik-swap-fails=true} (every swap throws after its first field write, as a
 * JVM that denies final-field writes would; kwik's stream-send race is closed on both ends by
 * {@code fix.kwik-stream-stall=on}, which needs no swap): every connection keeps kwik's own controller and its
 * transfer is intact; each is counted as a fallback in the Control MXBean ({@code status}) and the
 * cause is logged once; after the connections close and a full GC, no agent object per connection
 * is left in the heap ({@code jcmd GC.class_histogram}, from outside).
 */
class KwikFailedSwapTest {

    static final int N = 40;

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void aFailedSwapLeavesTheConnectionStockCountedAndHeldByNothing() throws Exception {
        Path dir = KwikIt.workDir("failed-swap");
        try (KwikIt.Server server = SafetyIt.startServer(dir, "server", "cc=bbr1;log=info;fix.kwik-stream-stall=on",
                List.of("-Dccagent.test.kwik-swap-fails=true"))) {
            long pid = server.jvm.pid();
            KwikIt.ClientRun run = KwikIt.runClient(dir, "client", null, Duration.ofSeconds(150),
                    "--port", Integer.toString(server.port), "--mode", "down", "--bytes", "300000",
                    "--connections", Integer.toString(N), "--parallel", "4", "--seed", "24");
            assertTrue(run.allOk(N), "every transfer intact (byte for byte)\n" + run.stdout + run.describe
                    + server.jvm.describe());
            long fallbacks;
            try (JMXConnector c = JMXConnectorFactory.connect(new JMXServiceURL(SafetyIt.managementUrl(pid)))) {
                MBeanServerConnection mbs = c.getMBeanServerConnection();
                fallbacks = (Long) mbs.getAttribute(new ObjectName("dev.ccagent:type=Control"), "Fallbacks");
            }
            Thread.sleep(1500); // kwik's closing/draining states end; the server forgets the connections
            String histogram = ForkedJvm.jcmd(pid, "GC.class_histogram");
            long adapters = SafetyIt.instances(histogram, "dev.ccagent.agent.kwik.KwikControllerAdapter");
            long meters = SafetyIt.instances(histogram, "dev.ccagent.agent.measure.ConnectionMeter");
            long telemetry = SafetyIt.instances(histogram, "dev.ccagent.agent.connection.SendTelemetry");
            long bbr = SafetyIt.instances(histogram, HeapClasses.ALGORITHM_CLASSES.get("bbr1"));
            String err = server.jvm.stderr();
            int logged = SafetyIt.count(err, "kwik controller injection failed");
            System.out.printf("[it] failed swap: %d connections, fallbacks %d, log lines %d; left after close: adapters %d,"
                    + " meters %d, telemetry %d, Bbr1 %d%n", N, fallbacks, logged, adapters, meters, telemetry, bbr);
            assertEquals(N, fallbacks, "every failed swap is counted as a fallback" + server.jvm.describe());
            assertEquals(1, logged, "the cause is logged once\n" + err);
            assertTrue(err.contains("injected swap failure"), err);
            assertEquals(0, adapters, "no adapter is held");
            assertEquals(0, meters, "no meter is held");
            assertEquals(0, telemetry, "no telemetry is held");
            assertEquals(0, bbr, "no controller is held");
        }
    }
}
