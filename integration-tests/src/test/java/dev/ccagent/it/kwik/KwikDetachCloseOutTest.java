package dev.ccagent.it.kwik;

import dev.ccagent.it.ForkedJvm;
import dev.ccagent.it.emulator.LinkEmulator;
import dev.ccagent.it.emulator.LinkProfile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Detach under load (issue #24): 50 downloads share a 40 Mbit/s emulated link; the agent is
 * detached over JMX while they run. Every live connection is closed out at once (the arms' open
 * counts drop to zero), every transfer completes intact on kwik's controller, and once they have
 * closed and a full GC ran, no agent object per connection is left ({@code jcmd GC.class_histogram}).
 * (Detach also removes {@code fix.kwik-stream-stall} from the server, so kwik's own stream-send race
 * is back for the rest of the transfers: a download that stalls is retried by the client, as
 * {@link UnpatchedKwik} says; 3 retries once were not enough, with about half of the 50 stalling.)
 */
class KwikDetachCloseOutTest {

    static final int N = 50;

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void detachClosesOutEveryLiveConnection() throws Exception {
        Path dir = KwikIt.workDir("detach-close-out");
        try (KwikIt.Server server = SafetyIt.startServer(dir, "server", "cc=bbr1;log=info;fix.kwik-stream-stall=on", List.of());
             LinkEmulator link = LinkEmulator.start(new InetSocketAddress("127.0.0.1", server.port),
                     LinkProfile.builder().delay(2_000_000).build(),
                     LinkProfile.builder().rate(40_000_000L).delay(2_000_000).bufferBdp(2, 10_000_000).build(), 3)) {
            long pid = server.jvm.pid();
            try (JMXConnector c = JMXConnectorFactory.connect(new JMXServiceURL(SafetyIt.managementUrl(pid)))) {
                MBeanServerConnection mbs = c.getMBeanServerConnection();
                // 50 x 1.5 MB at 40 Mbit/s: at least 15 s
                ForkedJvm client = KwikIt.launchClient(dir, "client", null, Duration.ofSeconds(200),
                        "--port", Integer.toString(link.port()), "--mode", "down", "--bytes", "1500000",
                        "--connections", Integer.toString(N), "--parallel", Integer.toString(N), "--seed", "50",
                        // after the detach kwik runs as released: its stalls are retried as UnpatchedKwik says
                        "--stall-seconds", Integer.toString(UnpatchedKwik.LINK_STALL_SECONDS),
                        "--stall-retries", Integer.toString(UnpatchedKwik.RETRIES));
                try (client) {
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
                    while (open(mbs) < N && System.nanoTime() < deadline && client.process().isAlive()) {
                        Thread.sleep(100);
                    }
                    long before = open(mbs);
                    assertEquals(N, before, "all connections live before the detach" + server.jvm.describe());
                    assertTrue(!client.stdout().contains("RESULT"), "still transferring: " + client.stdout());
                    mbs.invoke(new ObjectName("dev.ccagent:type=Control"), "detach", null, null);
                    long after = open(mbs);
                    boolean stillRunning = client.process().isAlive() && !client.stdout().contains("RESULT");
                    int exit = client.waitFor(Duration.ofSeconds(230));
                    KwikIt.ClientRun run = new KwikIt.ClientRun(exit, client.stdout(), client.stderr(), client.describe());
                    Thread.sleep(1500); // kwik's closing/draining states end; the server forgets the connections
                    String histogram = ForkedJvm.jcmd(pid, "GC.class_histogram");
                    long meters = SafetyIt.instances(histogram, "dev.ccagent.agent.measure.ConnectionMeter");
                    long adapters = SafetyIt.instances(histogram, "dev.ccagent.agent.kwik.KwikControllerAdapter");
                    long bbr = SafetyIt.instances(histogram, HeapClasses.ALGORITHM_CLASSES.get("bbr1"));
                    String err = server.jvm.stderr();
                    System.out.printf("[it] detach close-out: open before %d, right after detach %d; after close and GC:"
                            + " meters %d, adapters %d, Bbr1 %d; stalled attempts of unpatched kwik after the detach %d%n",
                            before, after, meters, adapters, bbr, run.retries());
                    assertTrue(stillRunning, "the transfers were still running after the detach");
                    assertTrue(run.allOk(N), "every transfer intact\n" + run.stdout + run.describe + server.jvm.describe());
                    assertEquals(0, after, "every live connection closed out: no arm counts one open");
                    assertTrue(err.contains(N + " measured connection(s) closed out"), err);
                    assertEquals(0, meters, "no meter held");
                    assertEquals(0, adapters, "no adapter held");
                    assertEquals(0, bbr, "no controller held");
                }
            }
        }
    }

    /** Open connections over every kwik arm, as the Arm MXBeans report them. */
    private static long open(MBeanServerConnection mbs) throws Exception {
        long sum = 0;
        for (ObjectName n : mbs.queryNames(new ObjectName("dev.ccagent:type=Arm,library=kwik,*"), null)) {
            sum += (Long) mbs.getAttribute(n, "OpenConnections");
        }
        return sum;
    }
}
