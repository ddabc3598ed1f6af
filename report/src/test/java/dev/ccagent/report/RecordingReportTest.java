package dev.ccagent.report;

import dev.ccagent.jfr.EventNames;
import jdk.jfr.DataAmount;
import jdk.jfr.Frequency;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The report reads events by their stable names; these test-local classes carry the same names
 * and fields as the product's events, so a real recording can be made here.
 */
class RecordingReportTest {

    @Name(EventNames.CONGESTION_STATE)
    @StackTrace(false)
    static final class State extends jdk.jfr.Event {
        String library;
        String connectionId;
        String canaryArm;
        String algorithm;
        String mode;
        @DataAmount(DataAmount.BYTES)
        long congestionWindow;
        @DataAmount(DataAmount.BYTES)
        @Frequency
        long pacingRate;
        @Timespan(Timespan.NANOSECONDS)
        long smoothedRtt;
        long packetsLost;
        @DataAmount(DataAmount.BYTES)
        long bytesAcked;
    }

    @Name(EventNames.SEND_LOOP_SPIN)
    @StackTrace(false)
    static final class Spin extends jdk.jfr.Event {
        String library;
        String connectionId;
        long emptyWakeups;
    }

    private static void state(String id, String arm, String algorithm, String mode, long rttMs, long lost, long acked)
            throws InterruptedException {
        State s = new State();
        s.begin();
        s.library = "kwik";
        s.connectionId = id;
        s.canaryArm = arm;
        s.algorithm = algorithm;
        s.mode = mode;
        s.congestionWindow = 100_000;
        s.pacingRate = 2_500_000;
        s.smoothedRtt = rttMs * 1_000_000;
        s.packetsLost = lost;
        s.bytesAcked = acked;
        s.commit();
    }

    static Path makeRecording(Path dir) throws Exception {
        return SyntheticFleet.record(dir.resolve("r.jfr"), List.of(State.class, Spin.class), () -> {
            for (int i = 0; i < 5; i++) {
                state("aa01", "default", "newreno", i < 2 ? "slow start" : "congestion avoidance", 40 + i, i, i * 1_000_000L);
                state("bb02", "canary", "bbr1", i < 1 ? "STARTUP" : "PROBE_BW", 20, 0, i * 2_000_000L);
                Thread.sleep(60);
            }
            Spin spin = new Spin();
            spin.library = "kwik";
            spin.connectionId = "aa01";
            spin.emptyWakeups = 5000;
            spin.commit();
        });
    }

    @Test
    void summarisesPerArm(@TempDir Path dir) throws Exception {
        RecordingReport report = RecordingReport.read(makeRecording(dir));
        assertEquals(null, report.problem());
        Map<String, RecordingReport.ArmSummary> arms = report.arms();
        assertEquals(2, arms.size(), arms.keySet().toString());
        RecordingReport.ArmSummary canary = arms.get("canary bbr1");
        RecordingReport.ArmSummary def = arms.get("default newreno");
        assertNotNull(canary);
        assertNotNull(def);
        assertEquals(1, canary.connections);
        assertEquals(8_000_000, canary.bytesAcked);
        assertEquals(4_000_000, def.bytesAcked);
        // 2.0 by construction: both connections span the same four sleep(60) gaps of the wall clock, their samples
        // microseconds apart. 1.5 needs a pause of a third of the span (>= 80 ms) between the last two commits, a window
        // of microseconds; the slowest single step timed in the gate (a GuardTest close, 16 runs) took 4.1 ms: under 1e-4
        assertTrue(canary.meanGoodputBitsPerSecond > def.meanGoodputBitsPerSecond * 1.5,
                "canary acked twice the bytes in the same time");
        assertEquals(20.0, canary.rttP50Millis, 0.01);
        assertTrue(def.rttP95Millis >= 43.9, "p95 " + def.rttP95Millis);
        assertEquals(4, def.packetsLost);
        // PROBE_BW spans three sleep(60) gaps (>= 180 ms), STARTUP one: fails only if that one sleep overruns by about
        // 120 ms more than the other three together. Not printed (passed 16 of 16 runs); against the slowest single step
        // timed in the gate (a GuardTest close, 16 runs: 4.1 ms), an estimate well under 1 in 10,000 a run
        assertTrue(canary.secondsInMode.get("PROBE_BW") > canary.secondsInMode.getOrDefault("STARTUP", 0.0));
        assertEquals(Map.of("SendLoopSpin", 1), def.alarms);
        assertEquals(10, report.count(EventNames.CONGESTION_STATE));
        assertEquals(1, report.events(EventNames.SEND_LOOP_SPIN).size());
        assertTrue(canary.alarms.isEmpty());
        String text = report.text();
        assertTrue(text.contains("canary bbr1: 1 connection"), text);
        assertTrue(text.contains("SendLoopSpin"), text);
    }

    @Test
    void htmlReportIsSelfContainedWithCharts(@TempDir Path dir) throws Exception {
        // the page `report --html` writes (FleetHtml), over the same recording
        FleetReport report = FleetReport.read(java.util.List.of(makeRecording(dir)), new FleetReport.Options());
        Path html = dir.resolve("r.html");
        FleetHtml.write(report, html);
        String page = Files.readString(html);
        assertTrue(page.contains("<svg"), "charts embedded");
        assertTrue(page.split("<polyline").length - 1 >= 4, "goodput CDF plus three time series");
        assertTrue(page.contains("canary bbr1"));
        assertTrue(!page.contains("src=\"http"), "no external resources");
    }

    @Test
    void truncatedRecordingGivesAClearErrorAndWhatCouldBeRead(@TempDir Path dir) throws Exception {
        Path whole = makeRecording(dir);
        byte[] bytes = Files.readAllBytes(whole);
        Path cut = dir.resolve("cut.jfr");
        Files.write(cut, Arrays.copyOf(bytes, bytes.length * 2 / 3));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintWriter o = new PrintWriter(new OutputStreamWriter(out, StandardCharsets.UTF_8), true);
        PrintWriter w = new PrintWriter(new OutputStreamWriter(err, StandardCharsets.UTF_8), true);
        int rc = ReportCommandLine.run(new String[] {cut.toString()}, o, w);
        o.flush(); // as the CLI does at exit
        w.flush();
        String e = err.toString(StandardCharsets.UTF_8);
        assertTrue(rc == 1, "rc " + rc + " " + e);
        assertTrue(e.contains("ccagent:"), e);
        assertTrue(e.contains(cut.toString()) || e.contains("damaged"), e);
    }

    @Test
    void notARecordingAndMissingFile(@TempDir Path dir) throws IOException {
        Path junk = dir.resolve("junk.jfr");
        Files.writeString(junk, "this is not a flight recording");
        IOException e = assertThrows(IOException.class, () -> RecordingReport.read(junk));
        assertTrue(e.getMessage().contains("not a readable JFR recording"), e.getMessage());
        IOException missing = assertThrows(IOException.class, () -> RecordingReport.read(dir.resolve("none.jfr")));
        assertTrue(missing.getMessage().contains("no such file"), missing.getMessage());
        Path empty = dir.resolve("empty.jfr");
        Files.write(empty, new byte[0]);
        IOException e2 = assertThrows(IOException.class, () -> RecordingReport.read(empty));
        assertTrue(e2.getMessage().contains("is empty"), e2.getMessage());
    }
}
