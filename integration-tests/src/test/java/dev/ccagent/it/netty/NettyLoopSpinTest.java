package dev.ccagent.it.netty;

import dev.ccagent.jfr.EventFields;
import dev.ccagent.jfr.EventNames;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A spin of a Netty event loop itself, on a loop that serves QUIC connections (issue 33 item 6): a
 * test-only handler ({@code LoopSpinner}) burns the server's event loop for 5 s in one call, 0.5 s into a
 * download through the emulator (20 Mbit/s, 40 ms RTT), beside two idle connections on the same loop.
 * From the JDK's recording parser: one {@code CpuSpin} episode within 5 s of the spin's start, naming
 * the loop's thread and the handler's method, blaming no connection, and listing as starved exactly
 * the server connections the application saw on that loop (their ids as the application's own
 * {@code QuicChannel}s print them) and none of the client's, on another loop; it ends with the loop's
 * return. The download arrives intact (checksum).
 */
class NettyLoopSpinTest {

    private static final Pattern SERVED = Pattern.compile("SERVED id=([0-9a-f]+) thread=(\\S+)");
    private static final Pattern CLIENT = Pattern.compile("CLIENT id=([0-9a-f]+)");
    private static final Pattern SPIN = Pattern.compile("LOOP SPIN thread=(\\S+) startEpochMs=([0-9]+)");
    private static final Pattern SPIN_END = Pattern.compile("LOOP SPIN END epochMs=([0-9]+)");

    @Test
    void aSpinningEventLoopIsFlaggedWithinFiveSecondsNamingTheLoopTheMethodAndTheConnectionsItStarves() throws Exception {
        Path rec = NettyApp.freshFile("netty-loop-spin.jfr");
        NettyApp.Run run = NettyApp.run("netty-loop-spin", NettyApp.Version.CURRENT, "cc=cubic;jfr=" + rec, 180,
                "connections=1", "bytes=4000000", "link=20000000,20,1,0", "idle-connections=2", "loop-spin=500,5000");
        assertLoopSpinFlagged(run, rec);
    }

    /**
     * Observe-only (issue 33 item 6): the same spin where the algorithm choice cannot apply. The test rewrites
     * Netty's {@code netty-codec-classes-quic} jar into a temporary one whose private
     * {@code QuicheQuicServerCodec.handleServer} is renamed (its one call site with it, so Netty itself still
     * works), as a Netty version that changed it would be. The agent must say the Netty module skipped, naming
     * that method, and that the spin monitor observes with Netty unchanged (the log and the recording's
     * {@code ModuleVerdict}); the spin is flagged as with the algorithm choice (the same assertions, from the
     * JDK's recording parser); and Netty runs stock: the agent's {@code netty.cc=bbr} reaches no connection (no
     * {@code AlgorithmAssigned} event, no connection line) and quiche's own window, sampled by the application,
     * halves at losses: the application's reno ran. A 4 s spin on a 1% lossy link (reno's halvings need losses).
     */
    @Test
    void theSameSpinIsFlaggedObserveOnlyWhereTheAlgorithmChoiceCannotApplyAndNettyRunsStock() throws Exception {
        Path rec = NettyApp.freshFile("netty-observe-only.jfr");
        String classPath = NettyApp.appClasses(NettyApp.Version.CURRENT) + java.io.File.pathSeparator
                + withoutHandleServer(NettyApp.jars(NettyApp.Version.CURRENT));
        NettyApp.Run run = NettyApp.runMain("netty-observe-only", "dev.ccagent.it.netty.NettyBulkApp", classPath,
                "netty.cc=bbr;jfr=" + rec, 180, "connections=1", "bytes=1500000", "link=20000000,20,1,0.01",
                "idle-connections=2", "loop-spin=500,4000", "app-cc=reno", "probe=10");
        assertLoopSpinFlagged(run, rec);

        List<String> skipped = run.lines("Netty QUIC 4.2.x (io.netty.handler.codec.quic) version "
                + System.getProperty("netty.version.current") + " in ");
        assertTrue(skipped.stream().anyMatch(l -> l.contains(": skipped: method " + CODEC.replace('/', '.')
                + ".handleServer(")), "the module skipped, naming the method: " + skipped);
        assertTrue(skipped.stream().anyMatch(l -> l.contains(": algorithm choice and pacing skipped (method "
                + CODEC.replace('/', '.') + ".handleServer(") && l.contains("); observing: spin monitor (")
                && l.endsWith("; Netty's behaviour unchanged")), "observe-only, said so: " + skipped);
        assertTrue(skipped.stream().noneMatch(l -> l.contains(": applied")), "nothing applied: " + skipped);
        assertTrue(run.lines("netty connection side=").isEmpty(), "no connection got the agent's algorithm: " + run.tail());

        List<RecordedEvent> events = RecordingFile.readAllEvents(rec);
        assertEquals(0, events.stream().filter(e -> e.getEventType().getName().equals(EventNames.ALGORITHM_ASSIGNED))
                .count(), "no algorithm assigned");
        Set<String> verdicts = events.stream().filter(e -> e.getEventType().getName().equals(EventNames.MODULE_VERDICT))
                .filter(e -> "netty".equals(e.getString(EventFields.LIBRARY)))
                .map(e -> e.getString(EventFields.VERDICT) + ": " + e.getString(EventFields.REASON))
                .collect(Collectors.toCollection(TreeSet::new));
        assertEquals(2, verdicts.size(), "the module's skip and observe-only's verdict: " + verdicts);
        assertTrue(verdicts.stream().anyMatch(v -> v.startsWith("skipped: method ")), verdicts.toString());
        assertTrue(verdicts.stream().anyMatch(v -> v.startsWith("applied: algorithm choice and pacing skipped (")
                && v.contains("observing: spin monitor")), verdicts.toString());

        java.util.Map<String, QuicheEvidence.Window> windows = QuicheEvidence.windows(run);
        assertEquals(1, windows.size(), "the download's window: " + run.lines("QUICHE"));
        windows.values().forEach(QuicheEvidence.Window::assertReno);
        System.out.println("[it] observe-only: " + run.lines("QUICHE"));
    }

    /** Netty's QUIC codec class whose private method the observe-only run renames. */
    static final String CODEC = "io/netty/handler/codec/quic/QuicheQuicServerCodec";

    /**
     * {@code classPath} with its {@code netty-codec-classes-quic} jar replaced by a copy (same name: the version
     * shows in the verdicts) whose {@code QuicheQuicServerCodec.handleServer} is renamed with its call.
     */
    static String withoutHandleServer(String classPath) throws Exception {
        String sep = java.io.File.pathSeparator;
        String codecJar = java.util.stream.Stream.of(classPath.split(sep))
                .filter(e -> Path.of(e).getFileName().toString().startsWith("netty-codec-classes-quic-")).findFirst()
                .orElseThrow(() -> new AssertionError("no netty-codec-classes-quic jar in " + classPath));
        Path dir = NettyApp.WORK.resolve("observe-only").toAbsolutePath();
        java.nio.file.Files.createDirectories(dir);
        Path copy = dir.resolve(Path.of(codecJar).getFileName());
        int renamed = dev.ccagent.it.RenamedMember.copy(Path.of(codecJar), copy, CODEC,
                new net.bytebuddy.jar.asm.commons.Remapper() {
                    @Override
                    public String mapMethodName(String owner, String name, String descriptor) {
                        return owner.equals(CODEC) && name.equals("handleServer") ? "handleServerRenamed" : name;
                    }
                });
        assertEquals(1, renamed, CODEC + " rewritten");
        return java.util.stream.Stream.of(classPath.split(sep)).map(e -> e.equals(codecJar) ? copy.toString() : e)
                .collect(Collectors.joining(sep));
    }

    /**
     * The run's one spin: the download intact, one loop-level episode in the recording within 5 s of the spin's
     * start, naming the loop's thread and the handler's method, blaming no connection, listing as starved exactly
     * the server connections the application saw on that loop, ended by progress within 3 s of the loop's return.
     */
    private static void assertLoopSpinFlagged(NettyApp.Run run, Path rec) throws Exception {
        assertEquals(0, run.exit, run.tail());
        assertTrue(run.out.contains("DONE ok=true"), "the download arrived intact: " + run.tail());

        Matcher spin = only(SPIN, run);
        String loop = spin.group(1);
        Instant spinStart = Instant.ofEpochMilli(Long.parseLong(spin.group(2)));
        Instant spinEnd = Instant.ofEpochMilli(Long.parseLong(only(SPIN_END, run).group(1)));
        Set<String> servedOnLoop = new TreeSet<>();
        for (String l : run.lines("SERVED id=")) {
            Matcher m = SERVED.matcher(l);
            assertTrue(m.find(), l);
            assertEquals(loop, m.group(2), "every server connection on the spun loop: " + l);
            servedOnLoop.add(m.group(1));
        }
        assertEquals(3, servedOnLoop.size(), "the download and two idle connections: " + run.lines("SERVED"));
        Set<String> clients = run.lines("CLIENT id=").stream().map(l -> {
            Matcher m = CLIENT.matcher(l);
            assertTrue(m.find(), l);
            return m.group(1);
        }).collect(Collectors.toCollection(TreeSet::new));
        assertEquals(3, clients.size(), run.lines("CLIENT").toString());

        List<RecordedEvent> spins = RecordingFile.readAllEvents(rec).stream()
                .filter(e -> e.getEventType().getName().equals(EventNames.CPU_SPIN)).collect(Collectors.toList());
        assertFalse(spins.isEmpty(), "no CpuSpin event: " + run.lines("CPU spin"));
        Set<Long> episodes = spins.stream().map(e -> e.getLong(EventFields.EPISODE_ID)).collect(Collectors.toSet());
        assertEquals(1, episodes.size(), "one episode: " + spins);
        RecordedEvent first = spins.get(0);
        for (RecordedEvent e : spins) {
            assertEquals("", e.getString(EventFields.CONNECTION_ID), "a loop-level spin blames no single connection: " + e);
            assertEquals(loop, e.getString(EventFields.THREAD_NAME), e.toString());
            assertEquals(servedOnLoop, new TreeSet<>(List.of(e.getString(EventFields.LOOP_CONNECTIONS).split(","))),
                    "the starved connections are the loop's server connections, none of the client's: " + e);
            assertEquals(3, e.getInt(EventFields.LOOP_CONNECTION_COUNT), e.toString());
            assertEquals("blocked", e.getString(EventFields.LOOP_SPIN), e.toString());
            assertTrue(e.getLong(EventFields.LOOP_TASK_DELAY) >= 1_000_000_000L, "the longest wait so far: " + e);
            if (e.getEndTime().isBefore(first.getEndTime())) {
                first = e;
            }
        }
        assertTrue(first.getString(EventFields.TOP_FRAMES).startsWith("dev.ccagent.it.netty.LoopSpinner.spinOnTheEventLoop"),
                "the method: " + first.getString(EventFields.TOP_FRAMES));
        assertTrue(first.getLong(EventFields.LOOP_TASK_DELAY) >= 1_000_000_000L, first.toString());
        long detectedMs = first.getEndTime().toEpochMilli() - spinStart.toEpochMilli();
        System.out.println("[it] loop spin flagged " + detectedMs + " ms after it started; tasks "
                + first.getLong(EventFields.LOOP_TASK_DELAY) / 1_000_000 + " ms late");
        // expected at 2.0-2.5 s: a 2 s window with nothing moving (the download moved until the spin) and the tasks a
        // second late (the connections' own tasks run every second)
        assertTrue(detectedMs >= 0 && detectedMs <= 5_000, "flagged " + detectedMs + " ms after the spin started");
        RecordedEvent last = spins.stream().filter(e -> !"ongoing".equals(e.getString(EventFields.ENDED_BY)))
                .findFirst().orElseThrow(() -> new AssertionError("the episode did not end: " + spins));
        assertEquals("progress", last.getString(EventFields.ENDED_BY), "the download moved again: " + last);
        assertTrue(!last.getEndTime().isBefore(spinEnd) && last.getEndTime().isBefore(spinEnd.plusSeconds(3)),
                "ended " + last.getEndTime() + ", the loop returned " + spinEnd);
    }

    private static Matcher only(Pattern p, NettyApp.Run run) {
        List<Matcher> found = run.out.lines().map(p::matcher).filter(Matcher::find).collect(Collectors.toList());
        assertEquals(1, found.size(), p + " in\n" + run.tail());
        return found.get(0);
    }
}
