package dev.ccagent.it.kwik;

import dev.ccagent.it.Acceptance;
import dev.ccagent.it.ForkedJvm;
import dev.ccagent.it.emulator.LinkEmulator;
import dev.ccagent.it.emulator.LinkProfile;
import dev.ccagent.jfr.EventFields;
import dev.ccagent.jfr.EventNames;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Detach under load at scale, then re-attach while the detached connections still run (issue 34, item 7).
 * A kwik server runs {@code cc=stock;canary=bbr1:50%;guard=on} with both fixes of kwik's own races and a
 * recording; {@value #LIVE} downloads of 3 MB (started {@value #RAMP_MILLIS} ms apart) share a 5 ms relay, all
 * of them live at the JMX detach. While they go on, the agent is attached again with the same settings (and a
 * second recording); when they have finished, {@value #AFTER} more downloads run. Checked from outside the agent:
 * <ul>
 *   <li>every connection the server held at the detach (assigned and not closed in the first recording) has
 *       exactly one {@code ConnectionSummary} with trigger {@code detach} there, on the algorithm its
 *       {@code AlgorithmAssigned} named, which is the selector's arm for its id, with controller {@code detached}
 *       (ours until then) or {@code stock} (JDK parser); the detach's log line counts exactly those; every transfer
 *       has one of its connections among them, or is between an abandoned attempt (closed before the detach) and
 *       its retry, and the only connections closed before the detach are attempts the client abandoned;</li>
 *   <li>none of them is taken up again by the re-attach: the second recording has no event of theirs (kwik's
 *       connections that exist before an attach are not walked), so they end on kwik's controller;</li>
 *   <li>once they have closed and a full GC ran, no agent object per connection is left ({@code GC.class_histogram});</li>
 *   <li>every transfer is intact byte for byte and none stalls mid-transfer (10 s without a byte), and at every
 *       stall the server's own kwik shows no served stream holding data without a send request (kwik's
 *       stream-send race, which about half of 50 live downloads hit when detach removed the fix);</li>
 *   <li>the re-attach starts the guard afresh: the later connections go to the selector's arm for their id, both
 *       arms, no rollback is carried over, and the canary's {@code GuardState} counts only connections closed after
 *       it (docs/canary.md, "Re-enabling").</li>
 * </ul>
 * A transfer whose first byte does not come within 10 s is retried and counted (at most
 * {@value #MAX_FIRST_BYTE_STALLS}). Its cause is kwik's, read from both ends' kwik at the stall (the client's
 * {@code STALLSTATE}, the server's {@code STATE}; docs/testing.md): with 200 transfers on 2 cores a new
 * connection's first RTT sample takes 3-13 s (the server's one connector thread answers its Initial late), so
 * kwik's first PTO is 10-40 s away, and a request the server never received (dropped by the kernel at the server's
 * full socket buffer, counted and printed) is sent again only then.
 * Acceptance: about 60 s of two busy JVMs and the relay. Its figures are printed as {@code [it]} lines.
 */
@Acceptance("detach with 200 live connections and re-attach under load: summaries, nothing held, transfers intact, the stall fix kept")
class KwikDetachAtScaleTest {

    static final int LIVE = 200;
    /** Fewer than the guard's 20 pairs at a 50% split, so no verdict can come from them. */
    static final int AFTER = 30;
    /**
     * Transfers whose first byte did not come within 10 s (retried; kwik's PTO after a burst-inflated RTT sample,
     * docs/testing.md): 0-3 of 200 in 30 runs with the 25 ms ramp (2026-12-05), 1-16 without the ramp; on
     * 2026-12-06's machine, where every transfer took about twice as long (34-63 s), 8, 12, 12, 13, 14 and 16 in six
     * quiet runs and 9 beside a clean-clone gate run. Each had its request in flight, unacknowledged and not received
     * by the server (16 of 16 server dumps: no stream); in the runs with 14 and 16 the kernel dropped 18 and 19
     * datagrams at the server's full socket buffer (kwik's default, 208 kB here), which fits: kwik resends only at
     * its first PTO, 3 RTT samples of 4-13 s away. 40 is 10 standard deviations above that day's mean (12.5, sd
     * 2.7): a run fails by chance far less than once in 10,000; it fails when handshakes take several times longer
     * still (a machine or a kwik change), which is then worth reading. A 50 ms ramp with 5 MB made it worse (17
     * stalls before all 200 were open).
     */
    static final int MAX_FIRST_BYTE_STALLS = 40;
    static final String ARGS = "cc=stock;canary=bbr1:50%;guard=on;fix.kwik-stream-stall=on;fix.kwik-loss-timer=on;log=info";

    @Test
    @Timeout(value = 600, unit = TimeUnit.SECONDS)
    void detachWithTwoHundredLiveConnectionsThenReattach() throws Exception {
        Path dir = KwikIt.workDir("detach-at-scale");
        Path first = dir.resolve("first.jfr").toAbsolutePath();
        Path second = KwikIt.freshFile(dir, "second.jfr");
        KwikIt.ClientRun run;
        KwikIt.ClientRun later;
        String histogramAfterDetached;
        String histogramAtEnd;
        String guardState;
        String serverErr;
        String serverOut;
        long openAtDetach;
        long openAfterDetach;
        long detachAt;
        double secondsUntilForgotten;
        long reattached;
        long udpDropped;
        long serverDrops;
        long relayDrops;
        ForkedJvm jvm = KwikGuardTest.startServer(dir, ARGS, first);
        try (KwikIt.Server server = KwikIt.awaitPort(jvm);
             LinkEmulator link = LinkEmulator.start(new InetSocketAddress("127.0.0.1", server.port),
                     LinkProfile.builder().delay(5_000_000).build(),
                     LinkProfile.builder().delay(5_000_000).build(), 7)) {
            long pid = server.jvm.pid();
            try (JMXConnector c = JMXConnectorFactory.connect(new JMXServiceURL(SafetyIt.managementUrl(pid)))) {
                MBeanServerConnection mbs = c.getMBeanServerConnection();
                long udpBefore = udpReceiveErrors();
                ForkedJvm client = KwikIt.launchClient(dir, "client", null, Duration.ofSeconds(300),
                        "--port", Integer.toString(link.port()), "--mode", "down", "--bytes", Long.toString(BYTES),
                        "--connections", Integer.toString(LIVE), "--parallel", Integer.toString(LIVE), "--seed", "70",
                        "--stall-seconds", "10", "--stall-retries", "3", "--ramp-millis", Long.toString(RAMP_MILLIS));
                Thread stallWatch = watchStalls(client, server.jvm, dir);
                try (client) {
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
                    while (KwikDetachCloseOutTest.open(mbs) < LIVE && System.nanoTime() < deadline && client.process().isAlive()) {
                        Thread.sleep(100);
                    }
                    openAtDetach = KwikDetachCloseOutTest.open(mbs);
                    assertEquals(LIVE, openAtDetach, "all connections live before the detach\n" + client.describe()
                            + server.jvm.describe());
                    detachAt = System.nanoTime();
                    mbs.invoke(new ObjectName("dev.ccagent:type=Control"), "detach", null, null);
                    openAfterDetach = KwikDetachCloseOutTest.open(mbs);
                    String written = "JFR recording written to " + first;
                    assertTrue(server.jvm.awaitOutput(written, Duration.ofSeconds(30)) > 0, "'" + written + "' not logged:\n"
                            + server.jvm.describe());
                    KwikIt.attach(pid, ARGS + ";jfr=" + second);
                    reattached = System.nanoTime();
                    int exit = client.waitFor(Duration.ofSeconds(330));
                    run = new KwikIt.ClientRun(exit, client.stdout(), client.stderr(), client.describe());
                    udpDropped = udpBefore < 0 ? -1 : udpReceiveErrors() - udpBefore;
                    // the two sockets that live through the test: the server's, and the relay's that every client sends to
                    serverDrops = udpDrops(server.port);
                    relayDrops = udpDrops(link.port());
                } finally {
                    stallWatch.interrupt();
                    stallWatch.join(10_000);
                }
                long closed = System.nanoTime();
                histogramAfterDetached = SafetyIt.afterClose(pid, "dev.ccagent.agent.measure.ConnectionMeter",
                        "dev.ccagent.agent.kwik.KwikControllerAdapter").histogram();
                secondsUntilForgotten = (System.nanoTime() - closed) / 1e9;

                later = KwikIt.runClient(dir, "client-later", null, Duration.ofSeconds(200),
                        "--port", Integer.toString(link.port()), "--mode", "down", "--bytes", "300000",
                        "--connections", Integer.toString(AFTER), "--parallel", "3", "--seed", "71",
                        "--stall-seconds", "10", "--stall-retries", "3");
                histogramAtEnd = SafetyIt.afterClose(pid, "dev.ccagent.agent.measure.ConnectionMeter",
                        "dev.ccagent.agent.kwik.KwikControllerAdapter").histogram();
                Set<ObjectName> canary = mbs.queryNames(new ObjectName("dev.ccagent:type=Arm,library=kwik,arm=canary,*"), null);
                assertEquals(1, canary.size(), "one canary arm: " + canary);
                guardState = (String) mbs.getAttribute(canary.iterator().next(), "GuardState");
            }
            server.jvm.closeStdin();
            assertEquals(0, server.jvm.waitFor(Duration.ofSeconds(60)), server.jvm.describe());
            serverErr = server.jvm.stderr();
            serverOut = server.jvm.stdout();
        }

        // the client's own clock (System.nanoTime is the machine's CLOCK_MONOTONIC): when each transfer ended
        int endedBeforeDetach = 0;
        int runningAtReattach = 0;
        Matcher mono = KwikIt.MONO_END.matcher(run.stdout);
        while (mono.find()) {
            long end = Long.parseLong(mono.group(1));
            endedBeforeDetach += end < detachAt ? 1 : 0;
            runningAtReattach += end > reattached ? 1 : 0;
        }
        assertTrue(run.allOk(LIVE), "every transfer alive at the detach intact\n" + run.stdout + run.describe + serverErr);
        assertTrue(later.allOk(AFTER), "every transfer after the re-attach intact\n" + later.stdout + later.describe + serverErr);

        // each transfer's attempts in order: its stalled ones (STALL lines), then the one that finished (RESULT)
        Map<String, List<String>> attempts = new HashMap<>();
        Set<String> stalledIds = new HashSet<>();
        int stalledMidTransfer = 0;
        Matcher stall = STALL.matcher(run.stdout);
        while (stall.find()) {
            attempts.computeIfAbsent(stall.group(1), k -> new ArrayList<>()).add(stall.group(3));
            stalledIds.add(stall.group(3));
            stalledMidTransfer += Long.parseLong(stall.group(2)) > 0 ? 1 : 0;
        }
        for (Matcher m : run.results) {
            attempts.computeIfAbsent(m.group(1), k -> new ArrayList<>()).add(m.group(2));
        }
        assertEquals(LIVE, attempts.size(), "transfers: " + attempts.size());
        Set<String> clientIds = new HashSet<>();
        attempts.values().forEach(clientIds::addAll);

        // the first recording: the connections the server held at the detach are those assigned and not closed
        // before it; each has exactly one detach summary. A first attempt that waited 10 s for its first byte was
        // abandoned by the client; if the server closed it before the detach its retry was the live one (one run
        // beside a gate run on 2026-12-06; or the retry came after the detach), and one the server had not yet closed
        // is closed out with the others.
        Events one = Events.of(RecordingFile.readAllEvents(first));
        Set<String> heldAtDetach = new HashSet<>(one.assigned.keySet());
        heldAtDetach.removeAll(one.closeSummaries.keySet());
        assertEquals(heldAtDetach, one.lastSummaries.keySet(), "detach summaries for exactly the connections held at the detach");
        Set<String> closedBefore = new HashSet<>(one.closeSummaries.keySet());
        closedBefore.removeAll(stalledIds);
        assertTrue(closedBefore.isEmpty(), "no connection closed before the detach but abandoned attempts: " + closedBefore);
        // every transfer had a connection at the detach, or was between two attempts: one abandoned and closed before
        int betweenAttempts = 0;
        for (Map.Entry<String, List<String>> transfer : attempts.entrySet()) {
            boolean held = transfer.getValue().stream().anyMatch(heldAtDetach::contains);
            boolean retrying = transfer.getValue().stream().anyMatch(one.closeSummaries::containsKey);
            assertTrue(held || retrying, "transfer " + transfer.getKey() + " live at the detach: " + transfer.getValue());
            betweenAttempts += held ? 0 : 1;
        }
        Set<String> firstAttachIds = new HashSet<>(one.assigned.keySet());
        Set<String> foreign = new HashSet<>(firstAttachIds);
        foreign.removeAll(clientIds);
        assertTrue(foreign.isEmpty(), "connections the client did not make: " + foreign);
        Map<String, Integer> perArm = new TreeMap<>();
        for (String id : heldAtDetach) {
            String[] predicted = KwikGuardTest.predictArm(id, 50, "bbr1");
            assertEquals(predicted[1], one.assigned.get(id).getString(EventFields.ALGORITHM), "arm of " + id);
            List<RecordedEvent> last = one.lastSummaries.get(id);
            assertEquals(1, last.size(), "one detach summary for " + id + ": " + last);
            // the summary covers the connection's time on the agent: the algorithm it ran, not kwik's that took over
            assertEquals(predicted[1], last.get(0).getString(EventFields.ALGORITHM), "summary of " + id);
            assertEquals(predicted[1].equals("stock") ? "stock" : "detached", last.get(0).getString(EventFields.CONTROLLER),
                    "controller in the summary of " + id);
            assertTrue(last.get(0).getLong(EventFields.BYTES_SENT) > 0, "bytes sent before the detach: " + last.get(0));
            perArm.merge(predicted[1], 1, Integer::sum);
        }
        // the canary's connections ran our controller and are handed to kwik's; the default arm's ran kwik's all along
        assertTrue(serverErr.contains(perArm.getOrDefault("bbr1", 0) + " existing kwik connection(s) handed to kwik's controller; "
                + heldAtDetach.size() + " measured connection(s) closed out"), perArm + "\n" + serverErr);
        Set<String> retryIds = new HashSet<>(clientIds);
        retryIds.removeAll(firstAttachIds); // the later attempts of retried transfers, made after the detach

        // the second recording: none of them again, the later ones on the selector's arms, no verdict carried over
        Events two = Events.of(RecordingFile.readAllEvents(second));
        Set<String> seenAgain = new HashSet<>(two.assigned.keySet());
        seenAgain.addAll(two.closeSummaries.keySet());
        seenAgain.addAll(two.lastSummaries.keySet());
        seenAgain.retainAll(firstAttachIds);
        assertTrue(seenAgain.isEmpty(), "connections of the first attach taken up by the second: " + seenAgain);
        Set<String> laterIds = new HashSet<>();
        Map<String, Integer> laterPerArm = new TreeMap<>();
        for (Matcher m : later.results) {
            String id = m.group(2);
            RecordedEvent assigned = two.assigned.get(id);
            assertNotNull(assigned, "no AlgorithmAssigned after the re-attach for " + id);
            String[] predicted = KwikGuardTest.predictArm(id, 50, "bbr1");
            assertEquals(predicted[1], assigned.getString(EventFields.ALGORITHM), "arm of " + id + " after the re-attach");
            assertNotNull(two.closeSummaries.get(id), "no close summary for " + id);
            laterPerArm.merge(predicted[1], 1, Integer::sum);
            laterIds.add(id);
        }
        Set<String> unknown = new HashSet<>(two.closeSummaries.keySet());
        unknown.removeAll(laterIds);
        unknown.removeAll(retryIds);
        assertTrue(unknown.isEmpty(), "close summaries of connections the clients did not make: " + unknown);
        assertEquals(2, laterPerArm.size(), "both arms after the re-attach: " + laterPerArm);
        assertEquals(0, two.rollbacks, "no rollback");
        // the guard judges only connections closed since the re-attach (the later ones, and retries made after it)
        Matcher judged = java.util.regex.Pattern.compile("^(\\d+) pairs \\((\\d+) vs (\\d+) connections\\)").matcher(guardState);
        assertTrue(judged.find(), "the canary's guard state: '" + guardState + "'");
        assertTrue(Integer.parseInt(judged.group(2)) + Integer.parseInt(judged.group(3)) <= two.closeSummaries.size(),
                "only connections closed since the re-attach (" + two.closeSummaries.size() + "): " + guardState);

        // a first byte not come in 10 s, by kwik's own state on the client: a loss-detection timer armed (its PTO,
        // 3 x an RTT sample of seconds taken in the burst) or none (nothing in flight: the request acknowledged)
        long waitingOnTimer = run.stdout.lines().filter(l -> l.startsWith("STALLSTATE") && !l.contains("timerIn=none")).count();
        long noTimer = run.stdout.lines().filter(l -> l.startsWith("STALLSTATE") && l.contains("timerIn=none")).count();
        long raceSignatures = raceSignatures(serverOut);
        long meters = SafetyIt.instances(histogramAfterDetached, "dev.ccagent.agent.measure.ConnectionMeter");
        long adapters = SafetyIt.instances(histogramAfterDetached, "dev.ccagent.agent.kwik.KwikControllerAdapter");
        long bbr = SafetyIt.instances(histogramAfterDetached, HeapClasses.ALGORITHM_CLASSES.get("bbr1"));
        long metersAtEnd = SafetyIt.instances(histogramAtEnd, "dev.ccagent.agent.measure.ConnectionMeter");
        long adaptersAtEnd = SafetyIt.instances(histogramAtEnd, "dev.ccagent.agent.kwik.KwikControllerAdapter");
        long bbrAtEnd = SafetyIt.instances(histogramAtEnd, HeapClasses.ALGORITHM_CLASSES.get("bbr1"));
        System.out.printf("[it] detach at scale: open %d before the detach, %d right after; %d still running once re-attached (%.1f s later); detach summaries %d (%s), %d closed before it, %d transfers between attempts;"
                        + " after they closed and a GC (%.1f s): meters %d, adapters %d, Bbr1 %d; stalled attempts %d (%d mid-transfer; at the first byte %d on kwik's timer, %d with none); UDP datagrams the kernel dropped for full receive buffers %d (the server's socket %d, the relay's from the clients %d, the rest the clients' and the relay's toward the server);"
                        + " after the re-attach %s (%d closes), guard '%s'; at the end meters %d, adapters %d, Bbr1 %d; client seconds %s%n",
                openAtDetach, openAfterDetach, runningAtReattach, (reattached - detachAt) / 1e9, one.lastSummaries.size(), perArm, one.closeSummaries.size(), betweenAttempts, secondsUntilForgotten, meters, adapters, bbr, run.retries(), stalledMidTransfer, waitingOnTimer, noTimer, udpDropped, serverDrops, relayDrops,
                laterPerArm, two.closeSummaries.size(), guardState, metersAtEnd, adaptersAtEnd, bbrAtEnd, seconds(run));
        run.stdout.lines().filter(l -> l.startsWith("STALL")).forEach(l -> System.out.println("[it] " + l));
        serverOut.lines().filter(l -> l.startsWith("STATE")).forEach(l -> System.out.println("[it] server " + l));
        assertEquals(0, endedBeforeDetach, "every transfer was live at the detach");
        assertTrue(runningAtReattach >= LIVE / 2, "at least half still ran at the re-attach: " + runningAtReattach);
        assertEquals(0, openAfterDetach, "every live connection closed out: no arm counts one open");
        assertEquals(0, stalledMidTransfer, "no download stalls mid-transfer after the detach: fix.kwik-stream-stall stays\n"
                + run.stdout);
        // kwik's stream-send race, seen by the server's kwik itself at a stall: data buffered, no send request counted
        assertEquals(0, raceSignatures, "a served stream with data and no send request (fix.kwik-stream-stall gone):\n"
                + serverOut.lines().filter(l -> l.startsWith("STATE")).toList());
        assertTrue(run.retries() <= MAX_FIRST_BYTE_STALLS, "first-byte stalls (kwik's handshake, docs/testing.md): "
                + run.retries() + "\n" + run.stdout);
        assertEquals(0, later.retries(), "no download stalls after the re-attach\n" + later.stdout);
        assertEquals(0, meters, "no meter held");
        assertEquals(0, adapters, "no adapter held");
        assertEquals(0, bbr, "no controller held");
        assertEquals(0, metersAtEnd, "no meter held at the end");
        assertEquals(0, adaptersAtEnd, "no adapter held at the end");
        assertEquals(0, bbrAtEnd, "no controller held at the end");
    }

    /**
     * 200 x 3 MB through the relay, as fast as the two cores move them: 11-35 s each (2026-12-05). The detach comes
     * once all are open (about 6 s after the client's start), the re-attach 1.4-2.9 s later, with all 200 still
     * running in every run. The 25 ms ramp spreads the 200 handshakes over 5 s: started at once, 1-16 of them per
     * run waited past 10 s for their first byte (kwik's PTO above).
     */
    static final long BYTES = 3_000_000;
    static final long RAMP_MILLIS = 25;
    static final java.util.regex.Pattern STALL = java.util.regex.Pattern.compile("^STALL conn=(\\d+) at=(\\d+) odcid=(\\S+)",
            java.util.regex.Pattern.MULTILINE);
    /** A served stream in the server's dump at a stall: its buffered bytes and its send requests counted. */
    static final java.util.regex.Pattern RACE = java.util.regex.Pattern.compile(
            "^STATE odcid=\\S+ written=\\d+ .*?stream\\d+\\[offset=\\d+ buffered=(\\d+) toRetransmit=\\d+ sendRequestsQueued=(-?\\d+)",
            java.util.regex.Pattern.MULTILINE);

    /** Served streams in the server's dumps ({@link #RACE}) with data buffered and no send request: the race's signature. */
    static long raceSignatures(String serverOut) {
        long n = 0;
        Matcher served = RACE.matcher(serverOut);
        while (served.find()) {
            n += Long.parseLong(served.group(1)) > 0 && Long.parseLong(served.group(2)) == 0 ? 1 : 0;
        }
        return n;
    }

    /**
     * On each STALL line of the client, the server's view of that connection at that moment: kwik's state of it and
     * its served stream ({@code dump}, {@code STATE} lines on the server's output) and its threads (the blocks naming
     * it printed, the whole dump in {@code threads-at-stall-N.txt} in the work directory).
     */
    static Thread watchStalls(ForkedJvm client, ForkedJvm server, Path dir) {
        long pid = server.pid();
        Thread t = new Thread(() -> {
            int seen = 0;
            try {
                while (!Thread.currentThread().isInterrupted()) {
                    List<String> odcids = STALL.matcher(client.stdout()).results().map(m -> m.group(3)).toList();
                    for (; seen < odcids.size(); seen++) {
                        // the server's own view of that connection's stream (KwikBulkServer's dump)
                        java.io.OutputStream stdin = server.process().getOutputStream();
                        stdin.write(("dump " + odcids.get(seen) + "\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                        stdin.flush();
                        String dump = ForkedJvm.jcmd(pid, "Thread.print");
                        Files.writeString(dir.resolve("threads-at-stall-" + seen + ".txt"), dump);
                        String id = odcids.get(seen);
                        for (String block : dump.split("\n\n")) {
                            if (block.contains(id)) { // its receiver, sender, callback and timer threads
                                System.out.println("[it] server thread at the stall of " + id + ": " + block);
                            }
                        }
                    }
                    Thread.sleep(200);
                }
            } catch (InterruptedException done) {
                // the client finished
            } catch (Exception e) {
                System.out.println("[it] stall watch: " + e);
            }
        }, "stall-watch");
        t.setDaemon(true);
        t.start();
        return t;
    }

    /**
     * The machine's UDP receive-buffer drops so far ({@code RcvbufErrors} of {@code /proc/net/snmp}): datagrams the
     * kernel discarded because a socket's receive buffer was full; {@code -1} where that file is not there.
     */
    static long udpReceiveErrors() {
        try {
            List<String> udp = Files.readAllLines(Path.of("/proc/net/snmp")).stream().filter(l -> l.startsWith("Udp: ")).toList();
            List<String> names = List.of(udp.get(0).trim().split("\\s+"));
            String[] values = udp.get(1).trim().split("\\s+");
            return Long.parseLong(values[names.indexOf("RcvbufErrors")]);
        } catch (java.io.IOException | RuntimeException e) {
            return -1;
        }
    }

    /** The kernel's drops for full receive buffers of the open UDP socket bound to {@code port} ({@code /proc/net/udp}, {@code udp6}); -1 if none. */
    static long udpDrops(int port) {
        try {
            String hexPort = String.format(java.util.Locale.ROOT, ":%04X", port);
            for (String table : List.of("/proc/net/udp", "/proc/net/udp6")) { // Java's sockets are mostly IPv6 ones
                for (String line : Files.readAllLines(Path.of(table))) {
                    String[] f = line.trim().split("\\s+");
                    if (f.length > 12 && f[1].endsWith(hexPort)) {
                        return Long.parseLong(f[f.length - 1]);
                    }
                }
            }
        } catch (java.io.IOException | RuntimeException e) {
            // not Linux
        }
        return -1;
    }

    /** The client's transfer times, min-max. */
    private static String seconds(KwikIt.ClientRun run) {
        double min = Double.MAX_VALUE;
        double max = 0;
        for (Matcher m : run.results) {
            if (m.group(5) != null) {
                double s = Double.parseDouble(m.group(5));
                min = Math.min(min, s);
                max = Math.max(max, s);
            }
        }
        return String.format(java.util.Locale.ROOT, "%.1f-%.1f", min, max);
    }

    /** A recording's server-side events by connection id: assignments, last summaries at detach, close summaries. */
    private record Events(Map<String, RecordedEvent> assigned, Map<String, List<RecordedEvent>> lastSummaries,
            Map<String, RecordedEvent> closeSummaries, int rollbacks) {

        static Events of(List<RecordedEvent> events) {
            Map<String, RecordedEvent> assigned = new HashMap<>();
            Map<String, List<RecordedEvent>> detach = new HashMap<>();
            Map<String, RecordedEvent> close = new HashMap<>();
            int rollbacks = 0;
            for (RecordedEvent e : events) {
                String name = e.getEventType().getName();
                if (name.equals(EventNames.CANARY_ROLLED_BACK)) {
                    rollbacks++;
                    continue;
                }
                if (!name.equals(EventNames.ALGORITHM_ASSIGNED) && !name.equals(EventNames.CONNECTION_SUMMARY)
                        || !"server".equals(e.getString(EventFields.ROLE))) {
                    continue;
                }
                String id = e.getString(EventFields.CONNECTION_ID);
                if (name.equals(EventNames.ALGORITHM_ASSIGNED)) {
                    assigned.put(id, e);
                } else if ("detach".equals(e.getString(EventFields.TRIGGER))) {
                    detach.computeIfAbsent(id, k -> new ArrayList<>()).add(e);
                } else if ("close".equals(e.getString(EventFields.TRIGGER))) {
                    close.put(id, e);
                }
            }
            return new Events(assigned, detach, close, rollbacks);
        }
    }
}
