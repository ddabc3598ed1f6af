package dev.ccagent.it.kwik;

import dev.ccagent.jfr.EventFields;
import dev.ccagent.jfr.EventNames;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.openmbean.CompositeData;
import javax.management.openmbean.TabularData;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
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
 * is left in the heap ({@code jcmd GC.class_histogram}, from outside). None of them is counted as its
 * arm's (issue #34, item 8): the recording (read with the JDK's parser) has one AlgorithmAssigned per
 * connection the client made, each saying stock and why, and none saying bbr1; {@code status}'s
 * connection counts hold them as {@code default:bbr1 ran stock (swap failed)}, never as {@code default:bbr1},
 * and the arm's MXBean measured none.
 */
class KwikFailedSwapTest {

    static final int N = 40;

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void aFailedSwapLeavesTheConnectionStockCountedAndHeldByNothing() throws Exception {
        Path dir = KwikIt.workDir("failed-swap");
        Path rec = KwikIt.freshFile(dir, "server.jfr");
        KwikIt.ClientRun run;
        Map<String, Long> counts = new TreeMap<>();
        Map<String, Long> armConnections = new TreeMap<>();
        try (KwikIt.Server server = SafetyIt.startServer(dir, "server",
                "cc=bbr1;log=info;fix.kwik-stream-stall=on;jfr=" + rec,
                List.of("-Dccagent.test.kwik-swap-fails=true"))) {
            long pid = server.jvm.pid();
            run = KwikIt.runClient(dir, "client", null, Duration.ofSeconds(150),
                    "--port", Integer.toString(server.port), "--mode", "down", "--bytes", "300000",
                    "--connections", Integer.toString(N), "--parallel", "4", "--seed", "24");
            assertTrue(run.allOk(N), "every transfer intact (byte for byte)\n" + run.stdout + run.describe
                    + server.jvm.describe());
            long fallbacks;
            try (JMXConnector c = JMXConnectorFactory.connect(new JMXServiceURL(SafetyIt.managementUrl(pid)))) {
                MBeanServerConnection mbs = c.getMBeanServerConnection();
                fallbacks = (Long) mbs.getAttribute(new ObjectName("dev.ccagent:type=Control"), "Fallbacks");
                TabularData rows = (TabularData) mbs.getAttribute(new ObjectName("dev.ccagent:type=Control"),
                        "ConnectionCounts");
                for (Object row : rows.values()) {
                    CompositeData r = (CompositeData) row;
                    counts.put((String) r.get("key"), (Long) r.get("value"));
                }
                // the arm MXBeans (what the Prometheus exporter scrapes) measure no connection under bbr1
                for (ObjectName arm : mbs.queryNames(new ObjectName("dev.ccagent:type=Arm,*"), null)) {
                    armConnections.put(arm.getKeyProperty("arm") + ":" + arm.getKeyProperty("algorithm"),
                            (Long) mbs.getAttribute(arm, "Connections"));
                }
            }
            // kwik's closing and draining states end and the server forgets the connections: waited for, at most
            // SafetyIt.AFTER_CLOSE_SECONDS (past kwik's idle timeout), so a held object fails by what holds it, not by time
            String adapterClass = "dev.ccagent.agent.kwik.KwikControllerAdapter";
            String meterClass = "dev.ccagent.agent.measure.ConnectionMeter";
            String telemetryClass = "dev.ccagent.agent.connection.SendTelemetry";
            String bbrClass = HeapClasses.ALGORITHM_CLASSES.get("bbr1");
            SafetyIt.AfterClose left = SafetyIt.afterClose(pid, adapterClass, meterClass, telemetryClass, bbrClass);
            long adapters = left.instances(adapterClass);
            long meters = left.instances(meterClass);
            long telemetry = left.instances(telemetryClass);
            long bbr = left.instances(bbrClass);
            String err = server.jvm.stderr();
            int logged = SafetyIt.count(err, "kwik controller injection failed");
            System.out.printf(java.util.Locale.ROOT, "[it] failed swap: %d connections, fallbacks %d, log lines %d; left after"
                    + " close (%.1f s after the client's exit): adapters %d, meters %d, telemetry %d, Bbr1 %d%n", N, fallbacks,
                    logged, left.seconds(), adapters, meters, telemetry, bbr);
            assertEquals(N, fallbacks, "every failed swap is counted as a fallback" + server.jvm.describe());
            assertEquals(1, logged, "the cause is logged once\n" + err);
            assertTrue(err.contains("injected swap failure"), err);
            assertEquals(0, adapters, "no adapter is held");
            assertEquals(0, meters, "no meter is held");
            assertEquals(0, telemetry, "no telemetry is held");
            assertEquals(0, bbr, "no controller is held");
            server.jvm.closeStdin();
            assertEquals(0, server.jvm.waitFor(Duration.ofSeconds(60)), server.jvm.describe());
        }
        // the counts say what ran: kwik's controller, on every connection chosen for bbr1
        System.out.println("[it] failed swap: connection counts " + counts);
        assertEquals(Map.of("kwik default:bbr1 ran stock (swap failed)", (long) N), counts,
                "status's connection counts: none under the arm, all as what ran");
        System.out.println("[it] failed swap: arm MXBeans' connections " + armConnections);
        assertEquals(0L, armConnections.getOrDefault("default:bbr1", 0L), "the arm MXBean measured none");

        // the recording, read with the JDK's parser: one assignment per connection the client made, each stock
        Set<String> clientIds = run.results.stream().map(m -> m.group(2)).collect(Collectors.toSet());
        assertEquals(N, clientIds.size(), "distinct connection ids");
        Map<String, String> assigned = new TreeMap<>();
        for (RecordedEvent e : RecordingFile.readAllEvents(rec)) {
            if (e.getEventType().getName().equals(EventNames.ALGORITHM_ASSIGNED)) {
                String id = e.getString(EventFields.CONNECTION_ID);
                String what = e.getString(EventFields.CANARY_ARM) + ":" + e.getString(EventFields.ALGORITHM)
                        + " (" + e.getString(EventFields.REASON) + ")";
                assertEquals(null, assigned.put(id, what), "one AlgorithmAssigned per connection: " + id);
                assertEquals("server", e.getString(EventFields.ROLE), what);
                assertEquals("default:stock", e.getString(EventFields.CANARY_ARM) + ":" + e.getString(EventFields.ALGORITHM),
                        id + ": " + what);
                assertTrue(e.getString(EventFields.REASON).contains("swap failed")
                        && e.getString(EventFields.REASON).contains("injected swap failure"), id + ": " + what);
            }
        }
        assertEquals(clientIds, assigned.keySet(), "an AlgorithmAssigned for each connection the client made");
    }
}
