package dev.ccagent.agent.detect;

import dev.ccagent.jfr.EventFields;
import dev.ccagent.jfr.EventNames;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The stall rules on scripted streams (the clock and each stream's sample are the test's; no timing
 * and no randomness, so no bound here can fail by chance): an episode needs the stalled state with
 * unchanged figures for max(3 x PTO, 1 s); it ends with progress, with the stream gone or at detach; it
 * is in the recording at detection, every 5 s while it lasts, at its end, and when the recording stops.
 */
class StreamStallMonitorTest {

    static final long MS = 1_000_000L;

    final List<StreamStallMonitor.Reading> readings = new ArrayList<>();
    final StreamStallMonitor.Source source = sink -> readings.forEach(sink);
    final StreamStallMonitor monitor = new StreamStallMonitor();
    /** The count is the agent's since its start: this test's episodes are the increase. */
    final long before = StreamStallMonitor.episodes();
    long now = 1_000_000_000L;

    long episodes() {
        return StreamStallMonitor.episodes() - before;
    }

    StreamStallMonitorTest() {
        StreamStallMonitor.addSource(source);
    }

    @AfterEach
    void remove() {
        monitor.close("detach");
        readings.clear();
    }

    static StreamStallMonitor.Reading stream(Object key, boolean stalled, long offset, long bytes, long ptoMillis) {
        StreamStallMonitor.Reading r = new StreamStallMonitor.Reading();
        r.key = key;
        r.stalled = stalled;
        r.library = "test";
        r.connectionId = "c-" + key;
        r.streamId = 4;
        r.offset = offset;
        r.bytesWaiting = bytes;
        r.ptoNanos = ptoMillis * MS;
        return r;
    }

    /** A {@link #stream} the monitor watches from now on. */
    StreamStallMonitor.Reading watched(Object key, boolean stalled, long offset, long bytes, long ptoMillis) {
        StreamStallMonitor.Reading r = stream(key, stalled, offset, bytes, ptoMillis);
        readings.add(r);
        return r;
    }

    void after(long millis) {
        now += millis * MS;
        monitor.tick(now);
    }

    @Test
    void theThresholdIsThreePtosAndAtLeastOneSecond() {
        assertEquals(1_000 * MS, StreamStallMonitor.threshold(0));
        assertEquals(1_000 * MS, StreamStallMonitor.threshold(30 * MS), "loopback: the floor");
        assertEquals(1_500 * MS, StreamStallMonitor.threshold(500 * MS));
        assertEquals(3_075 * MS, StreamStallMonitor.threshold(1_025 * MS), "before kwik's first RTT sample");
    }

    @Test
    void aStallOfOneSecondWithUnchangedFiguresIsAnEpisodeThatEndsWithProgress() {
        StreamStallMonitor.Reading r = watched("a", true, 1200, 31_000, 30);
        after(1000); // first seen
        after(900);
        assertEquals(0, StreamStallMonitor.ongoing(), "0.9 s is under the threshold");
        after(100);
        assertEquals(1, StreamStallMonitor.ongoing(), "1 s: established");
        assertEquals(1, episodes());
        List<String> open = StreamStallMonitor.openEpisodes();
        assertEquals(1, open.size());
        assertTrue(open.get(0).contains("connection c-a stream 4") && open.get(0).contains("31000 B waiting at offset 1200")
                && open.get(0).endsWith("fix.kwik-stream-stall off"), open.toString());
        assertTrue(dev.ccagent.agent.runtime.AgentRuntime.alarms().stream().anyMatch(a -> a.startsWith(
                "stream stall on test connection c-a stream 4: 31000 B waiting")), "an alarm for status");
        after(3000);
        assertEquals(1, episodes(), "one episode while it lasts");
        r.stalled = false; // a send request was queued
        after(1000);
        assertEquals(0, StreamStallMonitor.ongoing());
        assertEquals(List.of(), StreamStallMonitor.openEpisodes());
        assertTrue(dev.ccagent.agent.runtime.AgentRuntime.alarms().stream().anyMatch(a -> a.startsWith(
                "stream stall on test connection c-a stream 4 ended (progress) after 5.0 s")),
                dev.ccagent.agent.runtime.AgentRuntime.alarms().toString());
    }

    @Test
    void figuresThatMoveRestartTheClock() {
        StreamStallMonitor.Reading r = watched("b", true, 0, 50_000, 30);
        for (int i = 0; i < 5; i++) { // a stream that keeps moving, seen between requests each time
            r.offset += 1200;
            r.bytesWaiting -= 1200;
            after(1000);
        }
        assertEquals(0, episodes(), "never the same figures twice");
        after(1000);
        assertEquals(1, episodes(), "unchanged for 1 s");
        r.offset += 1200;
        after(1000);
        assertEquals(0, StreamStallMonitor.ongoing(), "it moved: the episode ended");
        after(1000);
        assertEquals(2, episodes(), "stuck again at the new offset for 1 s: a second episode");
    }

    @Test
    void otherTrafficOrAFlowControlBlockNeitherEndsAnEpisodeNorStartsOne() {
        StreamStallMonitor.Reading r = watched("h", true, 1200, 31_000, 30);
        after(1000);
        after(1000);
        assertEquals(1, episodes());
        r.stalled = false;
        r.hidden = true; // another stream's packets in flight; this one has not moved
        after(1000);
        after(1000);
        assertEquals(1, StreamStallMonitor.ongoing(), "hidden, unchanged: the same episode goes on");
        r.stalled = true;
        r.hidden = false;
        after(1000);
        assertEquals(1, episodes(), "still the one episode");
        r.stalled = false;
        r.hidden = true;
        r.offset += 1200; // it moved
        after(1000);
        assertEquals(0, StreamStallMonitor.ongoing(), "it moved: ended");
        assertTrue(dev.ccagent.agent.runtime.AgentRuntime.alarms().stream().anyMatch(a -> a.startsWith(
                "stream stall on test connection c-h stream 4 ended (progress) after 5.0 s")));
        // a long flow-control block, then one stalled sample: no episode (the clock starts at the stalled sample)
        for (int i = 0; i < 5; i++) {
            after(1000);
        }
        r.stalled = true;
        r.hidden = false;
        after(1000);
        assertEquals(1, episodes(), "hidden samples do not count towards the threshold");
    }

    @Test
    void aResetEndsTheEpisodeAsClosedOnceAndTheCountsStayTrue() {
        StreamStallMonitor.Reading r = watched("i", true, 0, 1000, 30);
        after(1000);
        after(1000);
        assertEquals(1, StreamStallMonitor.ongoing());
        r.stalled = false;
        r.closed = true;
        after(1000);
        after(1000);
        assertEquals(0, StreamStallMonitor.ongoing(), "ended once: never below 0");
        assertTrue(dev.ccagent.agent.runtime.AgentRuntime.alarms().stream().anyMatch(a -> a.startsWith(
                "stream stall on test connection c-i stream 4 ended (close)")));
        watched("j", true, 0, 1000, 30);
        after(1000);
        after(1000);
        StreamStallMonitor.forgetOpen(); // the detector's thread did not answer at stop
        assertEquals(0, StreamStallMonitor.ongoing());
        assertEquals(List.of(), StreamStallMonitor.openEpisodes(), "no ghost in status");
    }

    @Test
    void aLongPtoLengthensTheThreshold() {
        watched("c", true, 0, 1000, 600); // 3 x 600 ms = 1.8 s
        after(1000);
        after(1000);
        assertEquals(0, StreamStallMonitor.ongoing(), "1 s < 1.8 s");
        after(1000);
        assertEquals(1, StreamStallMonitor.ongoing(), "2 s >= 1.8 s");
    }

    @Test
    void aStreamThatIsGoneEndsItsEpisodeAsClosedAndDetachEndsTheRest() {
        watched("d", true, 0, 1000, 30);
        watched("e", true, 0, 1000, 30);
        after(1000);
        after(1000);
        assertEquals(2, StreamStallMonitor.ongoing());
        readings.remove(0);
        after(1000);
        assertEquals(1, StreamStallMonitor.ongoing());
        assertTrue(dev.ccagent.agent.runtime.AgentRuntime.alarms().stream().anyMatch(a -> a.startsWith(
                "stream stall on test connection c-d stream 4 ended (close)")));
        monitor.close("detach");
        assertEquals(0, StreamStallMonitor.ongoing());
        assertTrue(dev.ccagent.agent.runtime.AgentRuntime.alarms().stream().anyMatch(a -> a.startsWith(
                "stream stall on test connection c-e stream 4 ended (detach)")));
    }

    @Test
    void anEpisodeIsRecordedAtDetectionWhileItLastsAtItsEndAndWhenTheRecordingStops(@TempDir Path dir) throws Exception {
        Path mid = dir.resolve("mid.jfr");
        Path file = dir.resolve("all.jfr");
        List<jdk.jfr.consumer.RecordedEvent> atDetection;
        try (jdk.jfr.Recording rec = TestRecordings.of(EventNames.STREAM_STALL)) {
            StreamStallMonitor.Reading r = stream("f", true, 2400, 31_000, 30);
            r.writerBlocked = true;
            r.fixOn = false;
            readings.add(r);
            after(1000);
            after(1000);
            rec.dump(mid); // a dump while the stall lasts holds it
            atDetection = TestRecordings.read(mid, EventNames.STREAM_STALL);
            for (int i = 0; i < 11; i++) { // 11 s more: two periodic events (at 5 s and 10 s after detection)
                after(1000);
            }
            watched("g", true, 0, 500, 30); // a second stall, still open when the recording stops
            after(1000);
            after(1000);
            r.stalled = false;
            after(1000);
            rec.stop();
            rec.dump(file);
        }
        assertTrue(atDetection.size() >= 1 && atDetection.size() <= 2, "committed at detection (and the dump's chunk end): " + atDetection);
        jdk.jfr.consumer.RecordedEvent first = atDetection.get(0);
        assertEquals("ongoing", first.getString(EventFields.ENDED_BY));
        assertEquals("test", first.getString(EventFields.LIBRARY));
        assertEquals("c-f", first.getString(EventFields.CONNECTION_ID));
        assertEquals(4, first.getLong(EventFields.STREAM_ID));
        assertEquals(31_000, first.getLong(EventFields.BYTES_WAITING));
        assertEquals(2400, first.getLong(EventFields.STREAM_OFFSET));
        assertTrue(first.getBoolean(EventFields.WRITER_BLOCKED));
        assertTrue(!first.getBoolean(EventFields.FIX_ON));
        assertEquals(30 * MS, first.getDuration(EventFields.PTO).toNanos());
        assertEquals(1_000 * MS, first.getDuration(EventFields.DETECTED_AFTER).toNanos());
        assertEquals(1_000 * MS, first.getDuration(EventFields.EPISODE_DURATION).toNanos());

        List<jdk.jfr.consumer.RecordedEvent> all = TestRecordings.read(file, EventNames.STREAM_STALL);
        long id = first.getLong(EventFields.EPISODE_ID);
        List<jdk.jfr.consumer.RecordedEvent> f = all.stream().filter(e -> e.getLong(EventFields.EPISODE_ID) == id)
                .collect(Collectors.toList());
        List<String> endedBy = f.stream().map(e -> e.getString(EventFields.ENDED_BY)).collect(Collectors.toList());
        // detection, 5 s and 10 s later, the end (and the mid-stall dump's chunk end)
        assertTrue(f.size() >= 4 && f.size() <= 5, endedBy.toString());
        assertEquals("progress", endedBy.get(endedBy.size() - 1), endedBy.toString());
        assertTrue(endedBy.subList(0, endedBy.size() - 1).stream().allMatch("ongoing"::equals), endedBy.toString());
        assertTrue(f.stream().anyMatch(e -> e.getDuration(EventFields.EPISODE_DURATION).toMillis() == 6_000), "5 s after detection");
        assertTrue(f.stream().anyMatch(e -> e.getDuration(EventFields.EPISODE_DURATION).toMillis() == 11_000), "10 s after detection");
        assertEquals(15_000, f.get(f.size() - 1).getDuration(EventFields.EPISODE_DURATION).toMillis(), "ended at the sample that saw it move");

        List<jdk.jfr.consumer.RecordedEvent> g = all.stream().filter(e -> "c-g".equals(e.getString(EventFields.CONNECTION_ID)))
                .collect(Collectors.toList());
        assertEquals(2, g.size(), "at detection and when the recording stopped: " + g);
        assertTrue(g.stream().allMatch(e -> "ongoing".equals(e.getString(EventFields.ENDED_BY))));
    }
}
