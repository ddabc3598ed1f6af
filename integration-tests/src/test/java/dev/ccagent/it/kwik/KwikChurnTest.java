package dev.ccagent.it.kwik;

import dev.ccagent.it.Acceptance;
import dev.ccagent.agent.connection.SendTelemetry;
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
 * Connection churn: rounds of short connections against one server, with the canary split and the
 * algorithm changed over JMX {@code set} between rounds. After each round (connections closed, a full
 * GC by {@code jcmd GC.class_histogram}, read from outside) the agent's per-connection objects
 * (adapters, timer entries, send telemetry) are back near zero and the agent's heap and its module
 * list stay flat: nothing keyed by connection outlives it.
 */
@Acceptance("a churn of 1,200 connections")
class KwikChurnTest {

    static final int ROUNDS = 3;
    static final int PER_ROUND = 400;

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void churnLeavesNoStateBehind() throws Exception {
        Path dir = KwikIt.workDir("churn");
        String[] sets = {"canary=bbr3:50%", "cc=cubic;canary=bbr1:20%", "cc=newreno;canary=cubic:10%"};
        try (KwikIt.Server server = SafetyIt.startServer(dir, "server",
                "cc=bbr1;canary=cubic:30%;log=warn;fix.kwik-stream-stall=on;fix.kwik-loss-timer=on", List.of())) {
            long pid = server.jvm.pid();
            String url = SafetyIt.managementUrl(pid);
            long[] agentBytes = new long[ROUNDS];
            long[] adapters = new long[ROUNDS];
            long started = System.nanoTime();
            int total = 0;
            try (JMXConnector c = JMXConnectorFactory.connect(new JMXServiceURL(url))) {
                MBeanServerConnection mbs = c.getMBeanServerConnection();
                ObjectName control = new ObjectName("dev.ccagent:type=Control");
                // the module verdicts are recorded when kwik's first target class loads (the first connection's
                // SenderImpl: matchers ask the type before the loader), so the list is counted after round 0
                int modules = -1;
                for (int round = 0; round < ROUNDS; round++) {
                    KwikIt.ClientRun run = KwikIt.runClient(dir, "client-" + round, "fix.kwik-stream-stall=on;fix.kwik-loss-timer=on;log=warn",
                            Duration.ofSeconds(120), "--port", Integer.toString(server.port), "--mode", "down",
                            "--bytes", "20000", "--connections", Integer.toString(PER_ROUND), "--parallel", "8",
                            "--seed", Integer.toString(100 + round));
                    // every transfer that connected is intact; on a loaded 2-core machine a handshake may
                    // time out now and then (kwik's client gives up after 30 s): counted, at most 1%
                    long intact = run.results.stream().filter(m -> m.group(7).equals("true")).count();
                    long connectFailures = run.results.stream().filter(m -> m.group(7).equals("false")
                            && String.valueOf(m.group(8)).startsWith("java.net.ConnectException")).count();
                    assertEquals(PER_ROUND, run.results.size(), ForkedJvm.tail(run.stdout));
                    assertEquals(PER_ROUND, intact + connectFailures, "round " + round + ": " + ForkedJvm.tail(run.stdout));
                    assertTrue(connectFailures <= PER_ROUND / 100, "round " + round + ": " + ForkedJvm.tail(run.stdout));
                    assertTrue(!run.stdout.contains("MISMATCH"), run.stdout);
                    if (connectFailures > 0) {
                        System.out.printf("[it] churn round %d: %d handshake time-outs%n", round, connectFailures);
                    }
                    total += PER_ROUND;
                    if (round == 0) {
                        modules = ((String[]) mbs.getAttribute(control, "Modules")).length;
                        assertTrue(modules > 0, "kwik's module verdicts recorded by the first connections");
                    }
                    mbs.invoke(control, "set", new Object[] {sets[round]}, new String[] {String.class.getName()});
                    Thread.sleep(1500); // kwik's closing/draining states end; the server forgets the connections
                    String histogram = ForkedJvm.jcmd(pid, "GC.class_histogram");
                    agentBytes[round] = SafetyIt.bytesOf(histogram, "dev.ccagent.");
                    adapters[round] = SafetyIt.instances(histogram, "dev.ccagent.agent.kwik.KwikControllerAdapter");
                    long entries = SafetyIt.instances(histogram, "dev.ccagent.agent.runtime.WakeupTimer$Entry");
                    long telemetry = SafetyIt.instances(histogram, "dev.ccagent.agent.connection.SendTelemetry");
                    System.out.printf("[it] churn round %d: %d connections so far; agent heap %d bytes, adapters %d,"
                            + " timer entries %d, telemetry %d%n", round, total, agentBytes[round], adapters[round],
                            entries, telemetry);
                    // a few connections may still be draining; none of the earlier rounds' are held
                    assertTrue(adapters[round] <= 40, "adapters left after " + total + " connections: " + adapters[round]);
                    assertTrue(entries <= 40, "timer entries left: " + entries);
                    assertTrue(telemetry <= 40, "telemetry left: " + telemetry);
                }
                assertEquals(modules, ((String[]) mbs.getAttribute(control, "Modules")).length, "module list flat");
            }
            // flat: the last round's agent heap is within 64 KB of the first's (the first already
            // holds every class's static state; 600 connections would add far more per round)
            assertTrue(agentBytes[ROUNDS - 1] <= agentBytes[0] + 64 * 1024,
                    "agent heap grew: " + java.util.Arrays.toString(agentBytes));
            System.out.printf("[it] churn: %d connections in %.1f s%n", total, (System.nanoTime() - started) / 1e9);
        }
    }

}
