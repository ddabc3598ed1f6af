package dev.ccagent.it.netty;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Fallbacks forced in the agent's Netty code (test-only switch {@code -Dccagent.test.netty-fail=...}),
 * with the summary period shortened to 1 s ({@code -Dccagent.test.fallback-summary-ms}): the first of a
 * cause is one line that says what the connection really does — quiche's own window (as the application
 * samples it) shows which algorithm ran — and the repeats come back in summary lines whose counts add
 * up to the failures after the first.
 */
class NettyFallbackTest {

    private static final String LINK = "link=20000000,20,1,0.01";
    private static final int CONNECTIONS = 3;
    private static final Pattern SUMMARY = Pattern.compile(
            "WARN fallback summary: (\\d+) more of (.+) \\((\\S+)\\) in the last 1 s; this cause: (\\d+) since start$");

    private static NettyApp.Run run(String name, String fault) throws Exception {
        java.nio.file.Files.createDirectories(NettyApp.WORK);
        java.nio.file.Files.deleteIfExists(recording(name));
        NettyApp.Run r = NettyApp.run(name, NettyApp.Version.CURRENT, "netty.cc=bbr;netty.stats.period=off;jfr="
                        + recording(name), 150,
                List.of("-Dccagent.test.netty-fail=" + fault, "-Dccagent.test.fallback-summary-ms=1000"),
                "connections=" + CONNECTIONS, "bytes=1572864", "app-cc=reno", "probe=10", LINK, "linger-ms=2500");
        assertEquals(0, r.exit, r.tail());
        assertTrue(r.out.contains("DONE ok=true"), r.tail());
        assertEquals(CONNECTIONS, r.lines("crcOk=true").size(), r.tail());
        return r;
    }

    private static java.nio.file.Path recording(String name) {
        return NettyApp.WORK.resolve(name + ".jfr").toAbsolutePath();
    }

    /**
     * The summary lines of {@code where}: their counts add up to every failure after the first. The server's
     * recording, read by the JDK's parser, has the same: one {@code Fallback} event of kind first, then one per
     * summary line with its count and total (the last line may come after the recording was written at exit).
     */
    private static void assertSummarised(NettyApp.Run r, String name, String where, int failures) throws Exception {
        long repeats = 0;
        long lastTotal = 0;
        List<String> lines = new java.util.ArrayList<>();
        for (String line : r.lines("WARN fallback summary: ")) {
            Matcher m = SUMMARY.matcher(line);
            assertTrue(m.find(), line);
            assertEquals(where, m.group(2), line);
            assertEquals("java.lang.IllegalStateException", m.group(3), line);
            repeats += Long.parseLong(m.group(1));
            lastTotal = Long.parseLong(m.group(4));
            lines.add("summary " + m.group(1) + " of " + m.group(4));
        }
        assertEquals(failures - 1, repeats, "repeats summarised:\n" + String.join("\n", r.lines("fallback")));
        assertEquals(failures, lastTotal, String.join("\n", r.lines("fallback")));
        List<String> events = new java.util.ArrayList<>();
        for (jdk.jfr.consumer.RecordedEvent e : jdk.jfr.consumer.RecordingFile.readAllEvents(recording(name))) {
            if (e.getEventType().getName().equals(dev.ccagent.jfr.EventNames.FALLBACK)) {
                assertEquals(where, e.getString(dev.ccagent.jfr.EventFields.WHERE), e.toString());
                assertEquals("java.lang.IllegalStateException", e.getString(dev.ccagent.jfr.EventFields.EXCEPTION), e.toString());
                events.add(e.getString(dev.ccagent.jfr.EventFields.KIND) + " " + e.getLong(dev.ccagent.jfr.EventFields.COUNT)
                        + " of " + e.getLong(dev.ccagent.jfr.EventFields.TOTAL));
            }
        }
        assertTrue(events.size() >= 2 && events.get(0).equals("first 1 of 1"), "Fallback events: " + events);
        List<String> summaries = events.subList(1, events.size());
        assertTrue(summaries.size() >= lines.size() - 1 && summaries.equals(lines.subList(0, summaries.size())),
                "Fallback events " + summaries + " against the summary lines " + lines);
    }

    /**
     * The pacer's liveness bounds, with the two faults they guard against injected into a real paced transfer
     * (quiche's Reno, paced from its window, through the emulator at 1% loss): the JVM's 50th pacer wake-up is
     * lost, and its 50th send-loop hold is never released (both in the first of two 1 MB downloads). Each costs a
     * connection about a second: every download arrives complete (the client's CRC), the second one too (behind
     * the same pacer), and each fault is one fallback line and one JFR event.
     * Without the bounds the lost wake-up stops every later datagram to that destination and the lost release
     * stops its connection's sending, each until the idle timeout (15 s) closes the connection short of its data.
     */
    @Test
    @Timeout(200)
    void aLostPacerWakeUpAndALostHoldReleaseCostASecondNotTheDownload() throws Exception {
        String name = "fallback-pacer-liveness";
        java.nio.file.Files.createDirectories(NettyApp.WORK);
        java.nio.file.Files.deleteIfExists(recording(name));
        NettyApp.Run r = NettyApp.run(name, NettyApp.Version.CURRENT,
                "netty.cc=reno;netty.pacing=on;netty.stats.period=off;jfr=" + recording(name), 150,
                List.of("-Dccagent.test.netty-fail=pacer-wakeup,send-loop-hold"),
                "connections=2", "bytes=1048576", LINK);
        assertEquals(0, r.exit, r.tail());
        assertTrue(r.out.contains("DONE ok=true"), r.tail());
        assertEquals(2, r.lines("crcOk=true").size(), r.tail());
        List<String> wakeUps = r.lines("WARN fallback: netty pacer wake-up failed");
        List<String> holds = r.lines("WARN fallback: netty send-loop hold failed");
        assertEquals(1, wakeUps.size(), "lost wake-up lines:\n" + String.join("\n", r.lines("fallback")));
        assertEquals(1, holds.size(), "lost release lines:\n" + String.join("\n", r.lines("fallback")));
        assertTrue(wakeUps.get(0).contains("did not come within 1000 ms of its time"), wakeUps.get(0));
        assertTrue(holds.get(0).contains("held for more than 1000 ms"), holds.get(0));
        assertTrue(r.lines("WARN fallback summary").isEmpty(), "each fault was injected once: " + r.lines("fallback"));
        List<String> events = new java.util.ArrayList<>();
        for (jdk.jfr.consumer.RecordedEvent e : jdk.jfr.consumer.RecordingFile.readAllEvents(recording(name))) {
            if (e.getEventType().getName().equals(dev.ccagent.jfr.EventNames.FALLBACK)) {
                events.add(e.getString(dev.ccagent.jfr.EventFields.WHERE) + ": "
                        + e.getString(dev.ccagent.jfr.EventFields.KIND) + " " + e.getLong(dev.ccagent.jfr.EventFields.COUNT)
                        + " of " + e.getLong(dev.ccagent.jfr.EventFields.TOTAL));
            }
        }
        java.util.Collections.sort(events);
        assertEquals(List.of("netty pacer wake-up: first 1 of 1", "netty send-loop hold: first 1 of 1"), events,
                "Fallback events in the server's recording");
    }

    /**
     * The accounting fails after each connection was created with BBR: the line says BBR runs (it used
     * to say "continues with the stock algorithm"), and quiche's window agrees (no reno halving,
     * although the application configured reno).
     */
    @Test
    @Timeout(200)
    void aFailureAfterCreationSaysTheConnectionRunsBbrAndIsSummarised() throws Exception {
        NettyApp.Run r = run("fallback-accounting", "accounting");
        List<String> first = r.lines("WARN fallback: netty connection accounting failed");
        assertEquals(List.of("WARN fallback: netty connection accounting failed; the connection runs bbr2_gcongestion"
                + " (arm default:bbr) but is not counted, logged, recorded in JFR or measured (first of this cause;"
                + " repeats are summarised every 1 s): java.lang.IllegalStateException: injected accounting failure"
                + " (-Dccagent.test.netty-fail=accounting)"), first.stream().map(l -> l.substring(l.indexOf("WARN")))
                .toList(), r.tail());
        // every connection of both sides (client and server share the JVM) failed once
        assertSummarised(r, "fallback-accounting", "netty connection accounting", 2 * CONNECTIONS);
        Map<String, QuicheEvidence.Window> windows = QuicheEvidence.windows(r);
        assertEquals(CONNECTIONS, windows.size(), r.tail());
        windows.values().forEach(QuicheEvidence.Window::assertNotReno);
    }

    /**
     * The selection fails after it set BBR on the shared config: the agent puts the application's reno
     * back before the connection is created, says so, and quiche's window halves: reno ran.
     */
    @Test
    @Timeout(200)
    void aFailureBeforeCreationPutsTheApplicationsRenoBack() throws Exception {
        NettyApp.Run r = run("fallback-selection", "selection");
        List<String> first = r.lines("WARN fallback: netty algorithm selection failed");
        assertEquals(1, first.size(), r.tail());
        // the first is the client's (it creates its connection before its Initial reaches the server), whose
        // codec keeps quiche's default cubic; the line names that connection's algorithm, read back from its config
        assertTrue(first.get(0).contains("WARN fallback: netty algorithm selection failed; the connection is created"
                + " with the application's settings (cubic) (first of this cause"), first.get(0));
        assertSummarised(r, "fallback-selection", "netty algorithm selection", 2 * CONNECTIONS);
        assertFalse(r.lines("could not restore").size() > 0, r.tail());
        Map<String, QuicheEvidence.Window> windows = QuicheEvidence.windows(r);
        assertEquals(CONNECTIONS, windows.size(), r.tail());
        windows.values().forEach(QuicheEvidence.Window::assertReno);
    }
}
