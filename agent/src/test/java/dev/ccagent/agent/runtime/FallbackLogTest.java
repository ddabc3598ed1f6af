package dev.ccagent.agent.runtime;

import dev.ccagent.agent.log.AgentLog;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FallbackLogTest {

    private final ByteArrayOutputStream captured = new ByteArrayOutputStream();

    @BeforeEach
    void capture() {
        FallbackLog.reset();
        AgentLog.setOutput(new PrintStream(captured, true, StandardCharsets.UTF_8));
    }

    @AfterEach
    void restore() {
        FallbackLog.reset();
        AgentLog.setOutput(System.err);
    }

    private List<String> lines(String contains) {
        return captured.toString(StandardCharsets.UTF_8).lines().filter(l -> l.contains(contains))
                .collect(Collectors.toList());
    }

    @Test
    void theFirstOfACauseIsLoggedAtOnceAndRepeatsAreSummarisedWithTheirCount() {
        for (int i = 0; i < 5; i++) {
            FallbackLog.record("netty connection accounting", "the connection runs bbr2_gcongestion",
                    new IllegalStateException("boom " + i));
        }
        FallbackLog.record("netty path stats", "the connection keeps its algorithm", new NullPointerException());
        List<String> first = lines("WARN fallback: netty connection accounting failed; the connection runs bbr2_gcongestion"
                + " (first of this cause; repeats are summarised every 60 s): java.lang.IllegalStateException: boom 0");
        assertEquals(1, first.size(), captured.toString());
        assertEquals(1, lines("WARN fallback: netty path stats failed").size(), captured.toString());
        assertTrue(lines("fallback summary").isEmpty(), "nothing summarised before the period: " + captured);
        assertTrue(FallbackLog.tickerRunning(), "repeats start the summary thread");

        assertEquals(1, FallbackLog.summarise());
        assertEquals(List.of(lines("fallback summary").get(0).substring(lines("fallback summary").get(0).indexOf("WARN"))),
                List.of("WARN fallback summary: 4 more of netty connection accounting (java.lang.IllegalStateException)"
                        + " in the last 60 s; this cause: 5 since start"));
        // the count is since the cause's last line: nothing new, nothing written
        assertEquals(0, FallbackLog.summarise());
        FallbackLog.record("netty connection accounting", "the connection runs cubic", new IllegalStateException());
        assertEquals(1, FallbackLog.summarise());
        assertTrue(lines("fallback summary").get(1).endsWith("fallback summary: 1 more of netty connection accounting"
                + " (java.lang.IllegalStateException) in the last 60 s; this cause: 6 since start"), captured.toString());
        assertEquals(List.of("netty connection accounting (java.lang.IllegalStateException): 6; the connection runs cubic",
                "netty path stats (java.lang.NullPointerException): 1; the connection keeps its algorithm"),
                FallbackLog.causes());
    }

    /** Each line has its event, read back by the JDK's recording parser. */
    @Test
    void eachLineHasItsFallbackEventInTheRecording(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        dev.ccagent.jfr.JfrSwitch.install();
        java.nio.file.Path file = dir.resolve("fallbacks.jfr");
        try (jdk.jfr.Recording r = new jdk.jfr.Recording()) {
            r.enable(dev.ccagent.jfr.EventNames.FALLBACK);
            r.start();
            assertTrue(dev.ccagent.jfr.JfrSwitch.on, "the switch follows the recording");
            for (int i = 0; i < 3; i++) {
                FallbackLog.record("netty path stats", "the connection keeps its algorithm", new NullPointerException());
            }
            assertEquals(1, FallbackLog.summarise());
            r.stop();
            r.dump(file);
        }
        List<jdk.jfr.consumer.RecordedEvent> events = jdk.jfr.consumer.RecordingFile.readAllEvents(file).stream()
                .filter(e -> e.getEventType().getName().equals(dev.ccagent.jfr.EventNames.FALLBACK))
                .collect(Collectors.toList());
        assertEquals(2, events.size(), events.toString());
        jdk.jfr.consumer.RecordedEvent first = events.get(0);
        assertEquals("first", first.getString(dev.ccagent.jfr.EventFields.KIND));
        assertEquals("netty path stats", first.getString(dev.ccagent.jfr.EventFields.WHERE));
        assertEquals("java.lang.NullPointerException", first.getString(dev.ccagent.jfr.EventFields.EXCEPTION));
        assertEquals("the connection keeps its algorithm", first.getString(dev.ccagent.jfr.EventFields.CONSEQUENCE));
        assertEquals(1, first.getLong(dev.ccagent.jfr.EventFields.COUNT));
        assertEquals(1, first.getLong(dev.ccagent.jfr.EventFields.TOTAL));
        jdk.jfr.consumer.RecordedEvent summary = events.get(1);
        assertEquals("summary", summary.getString(dev.ccagent.jfr.EventFields.KIND));
        assertEquals(2, summary.getLong(dev.ccagent.jfr.EventFields.COUNT), "the line's count: 2 more");
        assertEquals(3, summary.getLong(dev.ccagent.jfr.EventFields.TOTAL));
        assertEquals(1, lines("fallback summary: 2 more of netty path stats").size(), captured.toString());
    }

    @Test
    void stopWritesWhatIsPendingAndEndsTheThread() {
        FallbackLog.record("kwik observe", "x", new RuntimeException());
        FallbackLog.record("kwik observe", "x", new RuntimeException());
        assertTrue(FallbackLog.tickerRunning());
        FallbackLog.stop();
        assertFalse(FallbackLog.tickerRunning());
        assertEquals(1, lines("fallback summary: 1 more of kwik observe (java.lang.RuntimeException)").size(), captured.toString());
        assertFalse(Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.getName().equals("ccagent-fallbacks") && t.isAlive() && !t.isInterrupted()
                        && t.getState() != Thread.State.TERMINATED && waitDead(t)), "summary thread still alive");
    }

    private static boolean waitDead(Thread t) {
        try {
            t.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return t.isAlive();
    }

    @Test
    void exceptionsOfDifferentClassesAreDifferentCauses() {
        FallbackLog.record("netty algorithm selection", "c", new IllegalStateException());
        FallbackLog.record("netty algorithm selection", "c", new UnsupportedOperationException());
        assertEquals(2, lines("WARN fallback: netty algorithm selection failed").size(), captured.toString());
    }
}
