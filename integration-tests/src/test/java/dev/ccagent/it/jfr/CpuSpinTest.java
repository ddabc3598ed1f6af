package dev.ccagent.it.jfr;

import dev.ccagent.jfr.EventFields;
import dev.ccagent.jfr.EventNames;
import dev.ccagent.report.RecordingReport;
import dev.ccagent.it.ForkedJvm;
import jdk.jfr.consumer.RecordedEvent;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * CPU without progress, on real releases in forked JVMs. kwik 0.10.3 (unmodified, from Maven Central)
 * loops endlessly in its packet assembler when a stream blocked by flow control gets more data
 * (kwik's changelog, 0.10.4: "fix: regression that could cause endless loop in sender"; commit
 * 0ecfadf9 "do not schedule next send if blocked (leading to endless loop in packet assembler)"). A
 * client that stops reading triggers it; the agent runs observe-only there (no controller swap).
 * Evidence from outside the detector: the server process's CPU time (the OS), the async-profiler
 * flame graph, the JDK's recording parser, the client's checksum of the answer.
 */
class CpuSpinTest {

    static final long ANSWER = 4_000_000;

    @TempDir
    static Path dir;

    /**
     * Whether a CpuSpin event's sampled stack (its top 12 frames) is in kwik's send path. Where in it depends
     * on the instant of the samples: assembling frames, or encrypting the packet (a gate run on 2026-12-04
     * caught 8 frames of AES-GCM above {@code SenderImpl.send}), so any frame of kwik's sender or stream
     * output counts, not one method.
     */
    static boolean inKwiksSendPath(String topFrames) {
        return topFrames.contains("tech.kwik.core.send.") || topFrames.contains("tech.kwik.core.stream.StreamOutputStreamImpl");
    }

    @BeforeAll
    static void keystore() throws Exception {
        ServerProcess.keystore(dir);
    }

    static String oldKwikClassPath() throws Exception {
        Path jars = Path.of(System.getProperty("kwik.jars.old", "target/kwik-old"));
        List<String> cp = new ArrayList<>();
        cp.add(Path.of(SpinServerMain.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString());
        // this module's test classes, as when SpinServerMain was one of them (the test-only algorithm providers)
        cp.add(Path.of(CpuSpinTest.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString());
        try (Stream<Path> s = Files.list(jars)) {
            s.filter(p -> p.toString().endsWith(".jar")).sorted().forEach(p -> cp.add(p.toString()));
        }
        assertTrue(cp.stream().anyMatch(e -> e.contains("kwik-0.10.")), "the old kwik jar was copied: " + cp);
        return String.join(File.pathSeparator, cp);
    }

    static ForkedJvm server(String name, String classPath, String agentArgs, long answer) throws Exception {
        Path portFile = dir.resolve(name + ".port");
        ForkedJvm jvm = ForkedJvm.builder(name, SpinServerMain.class.getName())
                .classPath(classPath)
                .jvmArgs("-Xmx256m", "-XX:+UseSerialGC")
                .javaagent(ServerProcess.agentJar(), agentArgs)
                .args(ServerProcess.keystore(dir).toString(), portFile.toString(), Long.toString(answer), "1000")
                .dir(dir)
                .start();
        jvm.awaitLine(Pattern.compile("^listening on"), Duration.ofSeconds(60));
        return jvm;
    }

    static int port(String name) throws Exception {
        return Integer.parseInt(Files.readString(dir.resolve(name + ".port")).trim());
    }

    static ForkedJvm stallingClient(String name, int port, long before, long pauseMillis, String then)
            throws Exception {
        return stallingClient(dir, name, port, before, pauseMillis, then);
    }

    static ForkedJvm stallingClient(Path dir, String name, int port, long before, long pauseMillis, String then)
            throws Exception {
        return stallingClient(dir, name, port, before, pauseMillis, then, "spin", 256_000);
    }

    /** With the stream's flow-control window ({@code receiveBuffer} bytes) the client grants the server. */
    static ForkedJvm stallingClient(Path dir, String name, int port, long before, long pauseMillis, String then,
                                    String protocol, long receiveBuffer) throws Exception {
        return ForkedJvm.builder(name, StallingClientMain.class.getName())
                .classPath(ServerProcess.serverClassPath())
                .jvmArgs("-Xmx256m", "-XX:+UseSerialGC")
                .javaagent(ServerProcess.agentJar(), "fix.kwik-stream-stall=on;detect=off;log=warn")
                .args(Integer.toString(port), Long.toString(before), Long.toString(pauseMillis), then, protocol,
                        Long.toString(receiveBuffer))
                .dir(dir)
                .start();
    }

    static String log(ForkedJvm jvm) {
        return jvm.stdout() + jvm.stderr();
    }

    @Test
    void kwik0103SenderLoopIsFlaggedWithin5sProfiledAndEndsWhenTheClientReadsAgain() throws Exception {
        Path rec = dir.resolve("old-resume.jfr");
        Path prof = dir.resolve("prof-old");
        long pause = 7_000;
        String serverLog;
        Instant resumedAt;
        long cpuDuringPause;
        try (ForkedJvm server = server("old-server", oldKwikClassPath(), "jfr=" + rec + ";profile-on-spin=" + prof
                + ";profile-on-spin.duration=2s;fix.kwik-stream-stall=on", ANSWER);
             ForkedJvm client = stallingClient("stalling-client", port("old-server"), 64 * 1024, pause, "resume")) {
            client.awaitLine(Pattern.compile("^paused"), Duration.ofSeconds(60));
            long pausedAt = System.nanoTime();
            long cpu0 = server.cpuTime().orElseThrow().toNanos();
            long detected = server.awaitOutput("CPU spin on kwik connection", Duration.ofSeconds(20));
            assertTrue(detected > 0, "a CPU spin was flagged" + server.describe());
            long after = (detected - pausedAt) / 1_000_000;
            System.out.println("kwik 0.10.3 spin flagged " + after + " ms after the client stopped reading");
            // what on-call does while the server burns: dump the running recording (the JDK's jcmd)
            Path mid = dir.resolve("old-resume-mid.jfr");
            String dumped = ForkedJvm.jcmd(server.pid(), "JFR.dump", "name=ccagent", "filename=" + mid);
            RecordingReport during = RecordingReport.read(mid);
            assertNull(during.problem(), dumped);
            List<RecordedEvent> open = during.cpuSpinEpisodes();
            assertEquals(1, open.size(), "the spin is in a dump taken while it lasts: " + during.counts());
            assertEquals("ongoing", open.get(0).getString(EventFields.ENDED_BY), open.toString());
            assertTrue(inKwiksSendPath(open.get(0).getString(EventFields.TOP_FRAMES)), open.toString());
            assertTrue(during.text().contains("still ongoing"), during.text());
            // the client's own instant of resuming: this thread may see the line seconds later, after the dump above
            // (a gate run once took resumedAt here 2.2 s after the episode had ended: 1dcf9c0's clean clone)
            var resumed = client.awaitLine(Pattern.compile("^resumed (\\d+)"), Duration.ofSeconds(60));
            resumedAt = Instant.ofEpochMilli(Long.parseLong(resumed.group(1)));
            long pausedFor = System.nanoTime() - pausedAt;
            cpuDuringPause = server.cpuTime().orElseThrow().toNanos() - cpu0;
            var answered = client.awaitLine(Pattern.compile("^answered (\\d+) (\\w+)"), Duration.ofSeconds(90));
            assertEquals(ANSWER, Long.parseLong(answered.group(1)), "the whole answer arrived");
            assertEquals("ok", answered.group(2), "the answer is intact (pattern checked by the client)");
            assertTrue(server.awaitOutput("ended (progress)", Duration.ofSeconds(15)) > 0, "the episode ended when data flowed again"
                    + server.describe());
            System.out.printf("server CPU while the client did not read: %.1f s in %.1f s%n", cpuDuringPause / 1e9,
                    pausedFor / 1e9);
            // the OS's account, not ours: the server really burned CPU while nothing moved
            // (a blocked stream on a healthy server costs ~nothing; the bound leaves room for a CPU-starved host).
            // Measured 7.4-7.6 s of CPU in 7.0 s in 14 gate runs (2026-12-04): the spin holds a core; 0.15 fails only
            // if the server got less than a sixth of a core for 7 s on a 2-core host: odds below 1e-4
            assertTrue(cpuDuringPause >= 0.15 * pausedFor, "server process CPU " + cpuDuringPause / 1e6 + " ms in "
                    + pausedFor / 1e6 + " ms");
            // the detector's 2 s window plus its tick's phase: 2,219-2,524 ms in 14 gate runs (2026-12-04); 5 s needs the
            // agent's 1 s tick 2.5 s late, five times the lateness seen: odds below 1e-4 a run
            assertTrue(after <= 5_000, "flagged " + after + " ms after the client stopped reading");
            Path html = FlameGraphs.awaitFile(prof, "-cpu.html", 60);
            assertNotNull(html, "flame graph written" + server.describe());
            List<String> frames = FlameGraphs.frames(html);
            assertTrue(frames.stream().anyMatch(f -> f.startsWith("tech/kwik/core/send/PacketAssembler.assemble")),
                    "the flame graph names kwik's packet assembler");
            assertTrue(frames.stream().anyMatch(f -> f.startsWith("tech/kwik/core/stream/StreamOutputStreamImpl.sendFrame")),
                    "the flame graph names the frame supplier it loops on");
            assertEquals(0, client.waitFor(Duration.ofSeconds(30)));
            server.closeStdin();
            assertEquals(0, server.waitFor(Duration.ofSeconds(60)));
            serverLog = log(server);
        }
        // observe-only: the swap is skipped with its reason, the detector runs, the fix says why it does not apply
        assertTrue(serverLog.contains("field tech.kwik.core.recovery.RecoveryManager.congestionController"), serverLog);
        assertTrue(serverLog.contains("controller swap skipped (") && serverLog.contains(
                "observing: spin detector (CPU without progress)"), serverLog);
        assertTrue(serverLog.contains("kwik fix.kwik-stream-stall version 0.10.3") && serverLog.contains(
                "sendRequestsQueued"), serverLog);
        RecordingReport r = RecordingReport.read(rec);
        assertNull(r.problem(), "the whole recording was readable");
        List<RecordedEvent> spins = r.cpuSpinEpisodes();
        assertEquals(1, spins.size(), "one episode: " + r.events(EventNames.CPU_SPIN));
        RecordedEvent e = spins.get(0);
        assertEquals("kwik", e.getString(EventFields.LIBRARY));
        assertEquals("progress", e.getString(EventFields.ENDED_BY));
        // the same episode as the dump showed, its earlier events still ongoing
        List<RecordedEvent> all = r.events(EventNames.CPU_SPIN);
        assertTrue(all.size() >= 2 && all.stream().allMatch(x -> x.getLong(EventFields.EPISODE_ID) == e.getLong(EventFields.EPISODE_ID)), all.toString());
        assertFalse(e.getString(EventFields.CONNECTION_ID).isEmpty(), e.toString());
        assertTrue(e.getString(EventFields.THREAD_NAME).startsWith("sender"), e.toString());
        assertTrue(e.getDouble(EventFields.CPU_SHARE) >= 0.1, e.toString());
        assertTrue(inKwiksSendPath(e.getString(EventFields.TOP_FRAMES)), e.getString(EventFields.TOP_FRAMES));
        assertTrue(e.getString(EventFields.FLAME_GRAPH).endsWith("-cpu.html"), e.toString());
        // the episode ends after the client read again, and not long after: progress ends it at the detector's next
        // tick (1 s). The client's instant and the event's share the host's clock. A timing bound with no chance in
        // it: the end cannot precede the data that ended it, and the 15 s above hold 15 ticks (odds: a tick 14 s
        // late on a 2-core host, none seen; until 2026-12-04 the reference was this thread's late reading of the line)
        System.out.printf("kwik 0.10.3 episode ended %d ms after the client resumed%n",
                Duration.between(resumedAt, e.getEndTime()).toMillis());
        assertTrue(e.getEndTime().isAfter(resumedAt.minusSeconds(2)) && e.getEndTime().isBefore(resumedAt.plusSeconds(15)),
                e.getEndTime() + " vs client resumed " + resumedAt);
        assertTrue(e.getLong(EventFields.EPISODE_DURATION) - e.getLong(EventFields.DETECTED_AFTER) >= 1_000_000_000L, "lasted a second past detection: " + e);
        assertTrue(r.text().contains("CPU spin"), r.text());
        // observe-only's send-loop window: the same connection's windows while the client did not read
        assertTrue(serverLog.contains("observing: spin detector (CPU without progress), send-loop window (SendLoopSpin,"
                + " AckOnlySendLoop, SendPathAllocation)"), lines(serverLog, "observing").toString());
        assertSpinWindows(r, e.getString(EventFields.CONNECTION_ID), resumedAt.minusMillis(pause), resumedAt);
    }

    /**
     * kwik 0.10.3's loop as the window detector sees it in observe-only mode: its stream answers the packet assembler
     * with no frame millions of times a second, each an empty turn of the send loop (SendLoopSpin), and the sender
     * thread allocates hundreds of MB a second doing it (SendPathAllocation, flagged). Measured (2026-12-07): 8
     * SendLoopSpin windows at 3.4-11 million empty turns a second, 7 flagged allocation windows at 0.36-1.2 GB/s over a
     * 7 s pause. Asserted: every whole window inside the pause has its SendLoopSpin (the rule needs 500 empty turns a
     * second; the spin makes thousands of times that on a fifth of a core), and at least one is flagged for allocation
     * (256 MB/s: a quarter of a core of this loop).
     */
    static void assertSpinWindows(RecordingReport r, String connection, Instant pausedAt, Instant resumedAt) {
        List<RecordedEvent> spin = ofConnection(r.events(EventNames.SEND_LOOP_SPIN), connection);
        List<RecordedEvent> alloc = ofConnection(r.events(EventNames.SEND_PATH_ALLOCATION), connection).stream()
                .filter(x -> x.getString(EventFields.PATH).equals("sender")).collect(Collectors.toList());
        System.out.printf("kwik 0.10.3 observe-only, spinning connection: %d SendLoopSpin, %d SendPathAllocation (%d flagged),"
                + " %d AckOnlySendLoop%n", spin.size(), alloc.size(), alloc.stream().filter(x -> x.getBoolean(EventFields.FLAGGED)).count(),
                ofConnection(r.events(EventNames.ACK_ONLY_SEND_LOOP), connection).size());
        // whole windows inside the pause (from a second after it began: the first window may hold the handshake); each
        // connection's window writes its allocation event (every window, with few connections) and its spin event together
        List<RecordedEvent> inside = alloc.stream().filter(x -> x.getStartTime().isAfter(pausedAt.plusSeconds(1))
                && x.getEndTime().isBefore(resumedAt)).collect(Collectors.toList());
        assertTrue(inside.size() >= 2, "allocation windows inside the pause: " + alloc);
        for (RecordedEvent a : inside) {
            assertTrue(spin.stream().anyMatch(x -> Math.abs(Duration.between(x.getEndTime(), a.getEndTime()).toMillis()) < 500),
                    "a SendLoopSpin for the window of " + a + ": " + spin);
        }
        assertTrue(inside.stream().anyMatch(a -> a.getBoolean(EventFields.FLAGGED)), "an allocation storm: " + inside);
        for (RecordedEvent x : spin) {
            assertTrue(x.getLong(EventFields.EMPTY_WAKEUPS) >= 500, x.toString());
            assertTrue(x.getEndTime().isAfter(pausedAt) && x.getEndTime().isBefore(resumedAt.plusSeconds(3)), x.toString());
        }
    }

    static List<RecordedEvent> ofConnection(List<RecordedEvent> events, String connection) {
        return events.stream().filter(x -> connection.equals(x.getString(EventFields.CONNECTION_ID))).collect(Collectors.toList());
    }

    @Test
    void kwik0103SpinEpisodeEndsWhenTheClientClosesAndAHealthyConnectionBesideItHasNoSpinWindows() throws Exception {
        Path rec = dir.resolve("old-close.jfr");
        String serverLog;
        try (ForkedJvm server = server("old-server-2", oldKwikClassPath(), "jfr=" + rec, ANSWER);
             ForkedJvm client = stallingClient("closing-client", port("old-server-2"), 64 * 1024, 4_000, "close")) {
            client.awaitLine(Pattern.compile("^paused"), Duration.ofSeconds(60));
            // while it spins: a client that reads the whole answer at once and grants a flow-control window larger than
            // it, so that kwik 0.10.3's stream is never blocked (a blocked stream loops in bursts: see the docs)
            try (ForkedJvm healthy = stallingClient(dir, "reading-client", port("old-server-2"), 64 * 1024, 0, "resume",
                    "spin", 2 * ANSWER)) {
                var answered = healthy.awaitLine(Pattern.compile("^answered (\\d+) (\\w+)"), Duration.ofSeconds(60));
                assertEquals(ANSWER + " ok", answered.group(1) + " " + answered.group(2));
                assertEquals(0, healthy.waitFor(Duration.ofSeconds(30)));
            }
            assertTrue(server.awaitOutput("CPU spin on kwik connection", Duration.ofSeconds(20)) > 0, server.describe());
            client.awaitLine(Pattern.compile("^closed"), Duration.ofSeconds(60));
            // the episode ends when kwik's connection closes: on the client's CONNECTION_CLOSE, or, when the server
            // never processes it (sent once, on loopback, to a server whose sender burns a core; CI once waited 20 s
            // in vain), at the server's 30 s idle timeout
            assertTrue(server.awaitOutput("ended (", Duration.ofSeconds(45)) > 0, "the episode ended" + server.describe());
            server.closeStdin();
            assertEquals(0, server.waitFor(Duration.ofSeconds(60)));
            serverLog = log(server);
        }
        RecordingReport r = RecordingReport.read(rec);
        List<RecordedEvent> spins = r.cpuSpinEpisodes();
        assertEquals(1, spins.size(), serverLog);
        String endedBy = spins.get(0).getString(EventFields.ENDED_BY);
        assertTrue(endedBy.equals("close") || endedBy.equals("idle"), spins.toString());
        // the send-loop window: the spinning connection flagged, the one that moved 4 MB beside it measured, not flagged
        String spinning = spins.get(0).getString(EventFields.CONNECTION_ID);
        List<RecordedEvent> healthy = new ArrayList<>();
        for (String kind : List.of(EventNames.SEND_LOOP_SPIN, EventNames.ACK_ONLY_SEND_LOOP, EventNames.SEND_PATH_ALLOCATION)) {
            r.events(kind).stream().filter(x -> !spinning.equals(x.getString(EventFields.CONNECTION_ID))).forEach(healthy::add);
        }
        System.out.println("kwik 0.10.3 observe-only, healthy connection beside the spin: " + healthy.stream()
                .map(x -> x.getEventType().getName().replace("dev.ccagent.", "") + (x.hasField(EventFields.FLAGGED)
                        && x.getBoolean(EventFields.FLAGGED) ? " (flagged)" : "")).collect(Collectors.toList()));
        assertFalse(healthy.isEmpty(), "the healthy connection's windows are recorded (measurements): " + r.counts());
        assertTrue(healthy.stream().allMatch(x -> x.getEventType().getName().equals(EventNames.SEND_PATH_ALLOCATION)
                && !x.getBoolean(EventFields.FLAGGED)), "no spin, ACK-only loop or allocation storm on it: " + healthy);
        assertTrue(ofConnection(r.events(EventNames.SEND_LOOP_SPIN), spinning).size() >= 2, r.counts().toString());
    }

    @Test
    void kwik0103SpinStillOpenWhenTheServerIsStoppedIsInTheRecordingWrittenAtExit() throws Exception {
        Path rec = dir.resolve("old-stopped.jfr");
        try (ForkedJvm server = server("old-server-3", oldKwikClassPath(), "jfr=" + rec, ANSWER);
             ForkedJvm client = stallingClient("never-reading-client", port("old-server-3"), 64 * 1024, 120_000, "close")) {
            client.awaitLine(Pattern.compile("^paused"), Duration.ofSeconds(60));
            assertTrue(server.awaitOutput("CPU spin on kwik connection", Duration.ofSeconds(20)) > 0, server.describe());
            // the exit's event holds the episode as of its latest 1 s tick: 2.5 s leave the tick 1 s after the
            // detection 1.5 s to come late, the one after it 0.5 s (1.5 s until 2026-12-04 left one tick 0.5 s)
            Thread.sleep(2_500);
            // as a service manager stops it: SIGTERM while the sender spins; the JVM's exit writes the recording
            server.process().destroy();
            assertTrue(server.process().waitFor(60, java.util.concurrent.TimeUnit.SECONDS), server.describe());
            String serverLog = log(server);
            assertFalse(serverLog.contains("ended ("), "the episode was still open at exit: " + serverLog);
        }
        RecordingReport r = RecordingReport.read(rec);
        assertNull(r.problem(), "the whole recording was readable");
        List<RecordedEvent> spins = r.cpuSpinEpisodes();
        assertEquals(1, spins.size(), r.counts().toString());
        RecordedEvent e = spins.get(0);
        assertEquals("ongoing", e.getString(EventFields.ENDED_BY), e.toString());
        assertTrue(inKwiksSendPath(e.getString(EventFields.TOP_FRAMES)), e.getString(EventFields.TOP_FRAMES));
        // its figures reach the end: at least a second past detection (the 2.5 s above; a timing bound that fails
        // only if the detector's 1 s tick comes 1.5 s late, none seen: odds below 1e-4), at most of a core each
        // second (a share measured by the JVM's thread CPU clock over the episode; 5% for the clocks' granularity)
        assertTrue(e.getLong(EventFields.EPISODE_DURATION) - e.getLong(EventFields.DETECTED_AFTER) >= 1_000_000_000L, e.toString());
        assertTrue(e.getDouble(EventFields.CPU_SHARE) >= 0.1 && e.getDouble(EventFields.CPU_SHARE) <= 1.05, e.toString());
        assertTrue(r.text().contains("still ongoing"), r.text());
    }

    @Test
    void aBusyLoopInsideOneSendIterationIsFlaggedWithin5sAndProfiled() throws Exception {
        Path rec = dir.resolve("busy.jfr");
        Path prof = dir.resolve("prof-busy");
        java.util.concurrent.atomic.AtomicLong connectedAt = new java.util.concurrent.atomic.AtomicLong();
        String serverLog;
        try (ServerProcess server = ServerProcess.start(dir, "cc=" + BusySpin.NAME + ";jfr=" + rec + ";profile-on-spin="
                + prof + ";profile-on-spin.duration=2s", 3_000_000)) {
            Thread client = new Thread(() -> {
                try {
                    ServerProcess.client(server.port, 20_000, 0, 12, () -> connectedAt.set(System.nanoTime()));
                } catch (Exception e) {
                    System.out.println("client: " + e);
                }
            }, "busy-client");
            client.start();
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (connectedAt.get() == 0 && client.isAlive() && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertTrue(connectedAt.get() != 0, "connected\n" + server.output());
            long flagged = -1;
            while (System.nanoTime() < connectedAt.get() + 30_000_000_000L) {
                if (server.output().contains("CPU spin on kwik connection")) {
                    flagged = (System.nanoTime() - connectedAt.get()) / 1_000_000;
                    break;
                }
                Thread.sleep(100);
            }
            System.out.println("busy loop flagged " + flagged + " ms after the handshake");
            client.join(120_000);
            // 2,010-2,213 ms in 13 gate runs (2026-12-04): the 2 s window, then the next tick; 5 s needs the tick 2.8 s
            // late, over ten times the lateness seen: odds below 1e-4 a run
            assertTrue(flagged >= 0 && flagged <= 5_000, "flagged " + flagged + " ms after the handshake\n"
                    + server.output());
            Path html = FlameGraphs.awaitFile(prof, "-cpu.html", 60);
            assertNotNull(html, "flame graph written\n" + server.output());
            assertTrue(FlameGraphs.frames(html).stream().anyMatch(f -> f.startsWith("dev/ccagent/it/jfr/BusySpin$Controller.burn")),
                    "the flame graph names the busy loop");
            long endDeadline = System.nanoTime() + 20_000_000_000L;
            while (!server.output().contains("CPU spin on kwik connection") || !server.output().contains(") after ")) {
                if (System.nanoTime() > endDeadline) {
                    break;
                }
                Thread.sleep(200);
            }
            serverLog = server.output();
        }
        assertTrue(serverLog.contains("ended (close)"), "the episode ended with the connection\n" + serverLog);
        RecordingReport r = RecordingReport.read(rec);
        List<RecordedEvent> spins = r.cpuSpinEpisodes();
        assertEquals(1, spins.size(), r.events(EventNames.CPU_SPIN).toString());
        RecordedEvent e = spins.get(0);
        assertEquals("close", e.getString(EventFields.ENDED_BY));
        assertTrue(e.getString(EventFields.TOP_FRAMES).contains("BusySpin$Controller.burn"), e + "\n" + lines(serverLog, "CPU spin"));
        // it crawled (a few kB per second) rather than stood still: "almost no progress" counts too
        assertTrue(e.getLong(EventFields.APP_BYTES) > 0, e.toString());
    }

    static List<String> lines(String log, String needle) {
        return log.lines().filter(l -> l.contains(needle)).collect(Collectors.toList());
    }
}
