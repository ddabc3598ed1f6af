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
import java.util.regex.Matcher;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Detach under load (issue #24): 50 downloads share a 40 Mbit/s emulated link; the agent is
 * detached over JMX while they run. Every live connection is closed out at once (the arms' open
 * counts drop to zero), every transfer completes intact on kwik's controller, and once they have
 * closed and a full GC ran, no agent object per connection is left ({@code jcmd GC.class_histogram}).
 * Detach leaves the fixes of kwik's own races in place (issue 34; the server runs both,
 * {@code fix.kwik-stream-stall} and {@code fix.kwik-loss-timer}): the client sees no download stall
 * mid-transfer after it, and at every stall the server's kwik shows no served stream with data and no send
 * request (the race's signature, read as in {@link KwikDetachAtScaleTest}). Until 2026-12-04 detach removed them with the rest, kwik's stream-send race came back for
 * the rest of the transfers, and about half of the 50 stalled at least once. The client declares a stall
 * after 10 s without a byte and still retries it, so that a failure says how many; with 4 s
 * ({@link UnpatchedKwik#LINK_STALL_SECONDS}) the first byte of a few connections came later than that in
 * the busy seconds of 50 fresh connections and the detach (13 such "stalls" at byte 0 in 12 runs, every
 * one of them a transfer that had not started), and 2 transfers of about 500 paused that long mid-way.
 * At 10 s such first-byte stalls still came, 1 and 2 a run, when two runs shared the 2 cores (kwik's, the
 * flakes table): they are counted, bounded and retried, and no longer fail the test as a stall would.
 * {@link KwikStreamStallTest} proves the kept fix deterministically.
 */
class KwikDetachCloseOutTest {

    static final int N = 50;
    /** Attempts allowed to see no first byte in 10 s (kwik's, under load: the flakes table); each is retried. */
    static final int MAX_FIRST_BYTE_STALLS = 10;

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void detachClosesOutEveryLiveConnection() throws Exception {
        Path dir = KwikIt.workDir("detach-close-out");
        try (KwikIt.Server server = SafetyIt.startServer(dir, "server", "cc=bbr1;log=info;fix.kwik-stream-stall=on;fix.kwik-loss-timer=on", List.of());
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
                        // a stall is declared and retried (a failure below then says how many)
                        "--stall-seconds", "10",
                        "--stall-retries", "3");
                // at each stall, the server's own view of that connection (its kwik's stream state, its threads)
                Thread stallWatch = KwikDetachAtScaleTest.watchStalls(client, server.jvm, dir);
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
                    stallWatch.interrupt();
                    stallWatch.join(10_000);
                    KwikIt.ClientRun run = new KwikIt.ClientRun(exit, client.stdout(), client.stderr(), client.describe());
                    // a stall by the client's clock (10 s without a byte), split by where it came: mid-transfer, or
                    // before the first byte; and kwik's stream-send race as the server's kwik shows it at the stall
                    long midTransfer = 0;
                    long firstByte = 0;
                    Matcher stall = KwikDetachAtScaleTest.STALL.matcher(run.stdout);
                    while (stall.find()) {
                        if (Long.parseLong(stall.group(2)) > 0) {
                            midTransfer++;
                        } else {
                            firstByte++;
                        }
                    }
                    long raceSignatures = KwikDetachAtScaleTest.raceSignatures(server.jvm.stdout());
                    // kwik's closing and draining states end and the server forgets the connections: waited for, at
                    // most SafetyIt.AFTER_CLOSE_SECONDS (past kwik's idle timeout), so a held object fails by what holds
                    // it, not by time
                    String meterClass = "dev.ccagent.agent.measure.ConnectionMeter";
                    String adapterClass = "dev.ccagent.agent.kwik.KwikControllerAdapter";
                    String bbrClass = HeapClasses.ALGORITHM_CLASSES.get("bbr1");
                    SafetyIt.AfterClose left = SafetyIt.afterClose(pid, meterClass, adapterClass, bbrClass);
                    long meters = left.instances(meterClass);
                    long adapters = left.instances(adapterClass);
                    long bbr = left.instances(bbrClass);
                    String err = server.jvm.stderr();
                    System.out.printf(java.util.Locale.ROOT, "[it] detach close-out: open before %d, right after detach %d;"
                            + " after close and GC (%.1f s after the client's exit): meters %d, adapters %d, Bbr1 %d; stalled"
                            + " attempts after the detach %d (%d mid-transfer, %d before the first byte; race signatures"
                            + " on the server %d)%n", before, after, left.seconds(), meters, adapters, bbr, run.retries(),
                            midTransfer, firstByte, raceSignatures);
                    run.stdout.lines().filter(l -> l.startsWith("STALL")).forEach(l -> System.out.println("[it] " + l));
                    server.jvm.stdout().lines().filter(l -> l.startsWith("STATE"))
                            .forEach(l -> System.out.println("[it] server " + l));
                    assertTrue(stillRunning, "the transfers were still running after the detach");
                    assertTrue(run.allOk(N), "every transfer intact\n" + run.stdout + run.describe + server.jvm.describe());
                    // kwik's own race needs the fix gone: about 25 of the 50 stalled when detach removed it. With the
                    // fixes kept, a stall mid-transfer needs 10 s without a byte on a path of 4 ms: kwik's PTO doubling
                    // from about 50 ms through 8 lost probes in a row where the link drops only from a 2-BDP queue:
                    // none in 19 runs of 50 on 2026-12-04, nor in the runs since
                    assertEquals(0, midTransfer, "no download stalls mid-transfer after the detach: fix.kwik-stream-stall"
                            + " stays\n" + run.stdout + server.jvm.describe());
                    // the race as the server's kwik shows it at any stall, the first byte's included: data buffered on
                    // a served stream and no send request
                    assertEquals(0, raceSignatures, "a served stream with data and no send request (fix.kwik-stream-stall"
                            + " gone):\n" + server.jvm.stdout());
                    // before the first byte: kwik's loss recovery in the busy seconds of 50 handshakes on 2 cores (the
                    // flakes table, KwikDetachAtScaleTest: a first RTT sample of seconds puts kwik's first PTO 10-22 s
                    // later); each such attempt is retried and must be intact (above). 0 in 19 runs one at a time at
                    // 10 s (2026-12-04), 1 and 2 in two runs side by side on 2 cores (2026-12-06, load average 4-5, the
                    // client's RTT samples 2.9-6.6 s), 0-3 of 200 in KwikDetachAtScaleTest: 10 of 50 is far out,
                    // below 1e-4 a run stated from those figures
                    assertTrue(firstByte <= MAX_FIRST_BYTE_STALLS, "first-byte stalls (kwik's handshake, docs/testing.md): "
                            + firstByte + "\n" + run.stdout);
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
    static long open(MBeanServerConnection mbs) throws Exception {
        long sum = 0;
        for (ObjectName n : mbs.queryNames(new ObjectName("dev.ccagent:type=Arm,library=kwik,*"), null)) {
            sum += (Long) mbs.getAttribute(n, "OpenConnections");
        }
        return sum;
    }
}
