package dev.ccagent.it.jfr;

import dev.ccagent.jfr.EventFields;
import dev.ccagent.jfr.EventNames;
import dev.ccagent.report.RecordingReport;
import jdk.jfr.consumer.RecordedEvent;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Real kwik servers on 127.0.0.1 in forked JVMs with the agent: the seed bug of quic-go 4054
 * (faulty-zero-rate) is detected, recorded and profiled; a real algorithm and the stock controller
 * produce none of the spin events and sane congestion-state series.
 */
class JfrSpinDetectionTest {

    static final long UPLOAD = 8_000_000;
    static final long ANSWER = 3_000_000;

    @TempDir
    static Path dir;

    @BeforeAll
    static void keystore() throws Exception {
        ServerProcess.keystore(dir);
    }

    /** Named, not looked up: an algorithm dropped from the registry fails the tests instead of leaving them. */
    static String realAlgorithm() {
        return "bbr1";
    }

    @Test
    void faultyZeroRatePacerIsDetectedWithin5sRecordedAndProfiled() throws Exception {
        Path rec = dir.resolve("faulty.jfr");
        Path prof = dir.resolve("prof");
        long detectedAfter;
        try (ServerProcess server = ServerProcess.start(dir, "cc=" + FaultyZeroRate.NAME + ";jfr=" + rec
                + ";profile-on-spin=" + prof + ";profile-on-spin.duration=4s;log=debug", ANSWER)) {
            AtomicLong connectedAt = new AtomicLong();
            AtomicLong answered = new AtomicLong(-1);
            // a chatty client (1200 B every 2 ms for ~4 s): every few packets it elicits an ACK, which is all
            // the broken server can send
            Thread client = new Thread(() -> {
                try {
                    answered.set(ServerProcess.client(server.port, 2_400_000, 2, 8,
                            () -> connectedAt.set(System.nanoTime())));
                } catch (Exception e) {
                    answered.set(-2);
                }
            });
            client.start();
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (connectedAt.get() == 0 && client.isAlive() && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertTrue(connectedAt.get() != 0, "handshake completed (the faulty pacer breaks only after it)");
            detectedAfter = waitForLog(server, "send-loop spin on kwik connection", connectedAt.get(), 30);
            client.join(60_000);
            assertTrue(answered.get() < ANSWER, "the broken pacer never lets the answer through: " + answered);
            // flagged 724-1,416 ms after the connection was up in 6 runs (three clean-clone gates and three runs at load
            // average 6-8, 2026-12-06): a miss needs the detector's 1 s tick 3.6 s later than the latest seen; the same
            // detector and tick as CpuSpinTest's bounds (2.0-2.5 s there in 27 gate runs): below 1e-4 a run
            System.out.println("[it] send-loop spin flagged " + detectedAfter + " ms after the connection was up");
            assertTrue(detectedAfter >= 0 && detectedAfter <= 5_000, "detector fired " + detectedAfter
                    + " ms after the connection was up\n" + server.output());
            assertTrue(server.output().contains("ACK-only send loop on kwik connection"), server.output());
            Path html = FlameGraphs.awaitFile(prof, "-cpu.html", 60);
            assertTrue(html != null, "flame graph written\n" + server.output());
            List<String> frames = FlameGraphs.frames(html);
            assertTrue(frames.stream().anyMatch(f -> f.startsWith("tech/kwik/core/send/SenderImpl.")),
                    "the flame graph names kwik's send path: " + frames.size() + " frames");
            assertTrue(Files.list(prof).anyMatch(p -> p.toString().endsWith(".jfr")), "async-profiler JFR written");
        }
        RecordingReport s = RecordingReport.read(rec);
        assertNull(s.problem(), "the whole recording was readable");
        List<RecordedEvent> spins = s.events(EventNames.SEND_LOOP_SPIN);
        List<RecordedEvent> loops = s.events(EventNames.ACK_ONLY_SEND_LOOP);
        assertFalse(spins.isEmpty(), "SendLoopSpin recorded: " + s.counts());
        assertFalse(loops.isEmpty(), "AckOnlySendLoop recorded: " + s.counts());
        for (RecordedEvent e : spins) {
            double seconds = e.getLong(EventFields.WINDOW) / 1e9;
            assertEquals(FaultyZeroRate.NAME, e.getString(EventFields.ALGORITHM));
            assertTrue(seconds > 0.5 && seconds < 10, "window " + seconds);
            long past = e.getLong(EventFields.PAST_SEND_TIMES);
            assertTrue(past >= 50 * seconds, "send times in the past: " + e);
            // the adapter waits >= 1 ms after each violation: apart from the wake-up every received packet
            // causes, at most ~1000 timer wake-ups a second; a spin would be millions. Measured (8 runs, 65
            // windows, 2026-12-04, beside a full gate run): at most 874 a second beyond received packets, with
            // the client idle; short last windows 771-824. The bound is the 1 ms wait's own ceiling plus 30%,
            // which no timer or scheduler spread reaches: false-failure odds far under 1 in 10,000 a run.
            // (Before, a last window counted the sender's turns after the close: 1,290-1,490 a second over
            // 0.58-0.66 s, 1 run in 5. The detector now ends a closed connection's counts at its close.)
            assertTrue(e.getLong(EventFields.WAKEUPS) <= e.getLong(EventFields.PACKETS_RECEIVED) + 1_300 * seconds,
                    "bounded by the adapter's minimum wait: " + e);
            assertTrue(e.getLong(EventFields.WAKEUPS) >= e.getLong(EventFields.EMPTY_WAKEUPS), e.toString());
        }
        for (RecordedEvent e : loops) {
            long ackOnly = e.getLong(EventFields.ACK_ONLY_PACKETS);
            assertTrue(ackOnly >= 50, e.toString());
            assertTrue(e.getLong(EventFields.ACK_ELICITING_BYTES) <= 4800, "no data progressed: " + e);
            assertTrue(e.getLong(EventFields.PACKETS_RECEIVED) > 0, "ACKs answer the upload: " + e);
            assertTrue(e.getDouble(EventFields.ACK_ONLY_RATE) >= 50, e.toString());
            assertTrue(e.getLong(EventFields.REFUSALS) > 0, e.toString());
        }
        List<RecordedEvent> assigned = s.events(EventNames.ALGORITHM_ASSIGNED);
        assertTrue(assigned.stream().anyMatch(e -> FaultyZeroRate.NAME.equals(e.getString(EventFields.ALGORITHM))), assigned.toString());
        assertTrue(s.events(EventNames.AGENT_LIFECYCLE).stream().anyMatch(e -> "profiler capture".equals(e.getString(EventFields.ACTION))));
    }

    @Test
    void aRealAlgorithmShowsNoSpinAndEveryEventIsSane() throws Exception {
        String algorithm = realAlgorithm();
        Path rec = dir.resolve("real.jfr");
        Path prof = dir.resolve("prof-real");
        String serverLog;
        try (ServerProcess server = ServerProcess.start(dir, "cc=" + algorithm + ";opt." + algorithm
                + ".quantum-ratio=0.002;jfr=" + rec + ";profile-on-spin=" + prof + ";log=debug", ANSWER)) {
            long answered = ServerProcess.client(server.port, UPLOAD, 0, 90, () -> { });
            assertEquals(ANSWER, answered, server.output());
            Thread.sleep(2_500); // two more detector windows
            assertFalse(server.output().contains("send-loop spin"), server.output());
            assertFalse(server.output().contains("ACK-only send loop"), server.output());
            serverLog = server.output();
        }
        assertFalse(Files.exists(prof) && Files.list(prof).findAny().isPresent(), "no profiler capture\n" + serverLog);
        RecordingReport s = RecordingReport.read(rec);
        assertNull(s.problem(), "the whole recording was readable");
        assertEquals(0, s.count(EventNames.SEND_LOOP_SPIN), s.counts().toString());
        assertEquals(0, s.count(EventNames.ACK_ONLY_SEND_LOOP), s.counts().toString());
        for (String name : List.of(EventNames.CONGESTION_STATE, EventNames.PACING_RATE_CHANGE,
                EventNames.SEND_PATH_ALLOCATION, EventNames.ALGORITHM_ASSIGNED, EventNames.AGENT_LIFECYCLE)) {
            assertTrue(s.count(name) > 0, name + " in a normal recording: " + s.counts());
        }
        for (RecordedEvent e : s.ccagentEvents()) {
            for (jdk.jfr.ValueDescriptor v : e.getFields()) {
                Object value = e.getValue(v.getName());
                if (value instanceof Long && !v.getName().equals("probeBwPhase")) {
                    assertTrue((Long) value >= 0, v.getName() + " non-negative in " + e);
                }
            }
        }
        List<RecordedEvent> states = s.events(EventNames.CONGESTION_STATE).stream()
                .filter(e -> algorithm.equals(e.getString(EventFields.ALGORITHM)))
                .sorted(java.util.Comparator.comparing(RecordedEvent::getStartTime)) // threads' buffers interleave
                .collect(Collectors.toList());
        assertTrue(states.size() >= 2, "a series of states: " + states.size());
        long lastAcked = -1;
        for (RecordedEvent e : states) {
            assertFalse(e.getString(EventFields.MODE).isEmpty(), e.toString());
            assertTrue(e.getLong(EventFields.CONGESTION_WINDOW) >= 2 * 1200, e.toString());
            assertTrue(e.getLong(EventFields.PACING_RATE) > 0, e.toString());
            assertFalse(e.getString(EventFields.CONNECTION_ID).isEmpty(), e.toString());
            assertEquals("default", e.getString(EventFields.CANARY_ARM));
            assertTrue(e.getLong(EventFields.BYTES_ACKED) >= lastAcked, "bytes acked never decrease: " + e);
            lastAcked = e.getLong(EventFields.BYTES_ACKED);
        }
        // the periodic states end at the connection's close (it leaves the agent's registry then); its close summary
        // holds the last figures: the whole answer acknowledged, no fewer bytes than the last state counted
        List<RecordedEvent> closes = s.events(EventNames.CONNECTION_SUMMARY).stream()
                .filter(e -> "close".equals(e.getString(EventFields.TRIGGER)) && "server".equals(e.getString(EventFields.ROLE))
                        && algorithm.equals(e.getString(EventFields.ALGORITHM)))
                .collect(Collectors.toList());
        assertEquals(1, closes.size(), "the connection's close summary: " + closes);
        long acked = closes.get(0).getLong(EventFields.BYTES_ACKED);
        assertTrue(acked >= ANSWER, "the server's answer was acknowledged: " + acked);
        assertTrue(acked >= lastAcked, "the close summary counts at least the last state's bytes: " + acked + " < " + lastAcked);
        assertTrue(states.stream().anyMatch(e -> "periodic".equals(e.getString(EventFields.TRIGGER))));
        for (RecordedEvent e : s.events(EventNames.SEND_PATH_ALLOCATION)) {
            assertFalse(e.getBoolean(EventFields.FLAGGED), "no allocation storm: " + e);
            assertTrue(Stream.of("sender", "receiver").anyMatch(e.getString(EventFields.PATH)::equals));
        }
        for (RecordedEvent e : s.events(EventNames.PACING_STALL)) {
            assertTrue(e.getLong(EventFields.WAIT_TIME) > e.getLong(EventFields.EXPECTED_WAIT), e.toString());
        }
        List<RecordedEvent> assigned = s.events(EventNames.ALGORITHM_ASSIGNED).stream()
                .filter(e -> "kwik".equals(e.getString(EventFields.LIBRARY))).collect(Collectors.toList());
        assertTrue(!assigned.isEmpty(), s.counts().toString());
        for (RecordedEvent e : assigned) {
            assertEquals(algorithm, e.getString(EventFields.ALGORITHM), e.toString());
            assertEquals("server", e.getString(EventFields.ROLE), e.toString());
            assertEquals("default", e.getString(EventFields.CANARY_ARM), e.toString());
            assertEquals("default arm (100.0% of new connections)", e.getString(EventFields.REASON), e.toString());
            assertEquals("quantum-ratio=0.002", e.getString(EventFields.OPTIONS), "as the operator wrote them: " + e);
            assertTrue(e.getString(EventFields.CONNECTION_ID).matches("[0-9a-f]{8,40}"), e.toString());
        }
        // pacing changes: never a zero rate, the quantum within the pacer's documented bounds, the change as stated,
        // and per connection a chain (each event's previous rate is the last event's rate)
        List<RecordedEvent> pacing = s.events(EventNames.PACING_RATE_CHANGE).stream()
                .sorted(java.util.Comparator.comparing(RecordedEvent::getStartTime)).collect(Collectors.toList());
        java.util.Map<String, Long> lastRate = new java.util.HashMap<>();
        for (RecordedEvent e : pacing) {
            long prev = e.getLong(EventFields.PREVIOUS_RATE);
            long rate = e.getLong(EventFields.RATE);
            assertTrue(prev > 0 && rate > 0, "never a zero pacing rate: " + e);
            // the pacer's floor: two packets, one where two would take more than 10 ms at the rate (the
            // packet is kwik's maximum packet size, 1200-1500 bytes: two packets of any such size fit in
            // 10 ms from 300 kB/s on)
            long floor = rate >= 300_000 ? 2 * 1200 : 1200;
            assertTrue(e.getLong(EventFields.QUANTUM) >= floor && e.getLong(EventFields.QUANTUM) <= 64 * 1024, e.toString());
            assertEquals((double) (rate - prev) / prev, e.getDouble(EventFields.RATE_CHANGE), 1e-9, e.toString());
            boolean moved = Math.abs(rate - prev) > 0.1 * prev
                    || Math.abs(e.getLong(EventFields.QUANTUM) - e.getLong(EventFields.PREVIOUS_QUANTUM)) > 0.1 * e.getLong(EventFields.PREVIOUS_QUANTUM);
            assertTrue(moved, "an event only for a change beyond the threshold: " + e);
            Long last = lastRate.put(e.getString(EventFields.CONNECTION_ID), rate);
            if (last != null) {
                assertEquals((long) last, prev, "chained per connection: " + e);
            }
        }
        List<RecordedEvent> life = s.events(EventNames.AGENT_LIFECYCLE);
        assertTrue(life.stream().anyMatch(e -> "installed".equals(e.getString(EventFields.ACTION))), life.toString());
        assertTrue(life.stream().anyMatch(e -> "module applied".equals(e.getString(EventFields.ACTION))
                && "kwik".equals(e.getString(EventFields.LIBRARY))), life.toString());
        // the modules' verdicts for the server's loader, in the recording as the log lines say them
        List<RecordedEvent> verdicts = s.events(EventNames.MODULE_VERDICT);
        RecordedEvent swap = verdicts.stream().filter(e -> "kwik 0.10.x (tech.kwik.core)".equals(e.getString(EventFields.MODULE)))
                .findFirst().orElseThrow(() -> new AssertionError("no ModuleVerdict of the kwik swap: " + verdicts));
        assertEquals("at verdict", swap.getString(EventFields.KIND), swap.toString());
        assertEquals("applied", swap.getString(EventFields.VERDICT), swap.toString());
        assertEquals("kwik", swap.getString(EventFields.LIBRARY), swap.toString());
        String version = swap.getString(EventFields.LIBRARY_VERSION);
        String loader = swap.getString(EventFields.CLASS_LOADER);
        assertTrue(serverLog.contains("kwik 0.10.x (tech.kwik.core) version " + version + " in " + loader + ": applied"),
                swap + "\n" + serverLog);
        RecordedEvent fix = verdicts.stream().filter(e -> "fix.kwik-stream-stall".equals(e.getString(EventFields.MODULE)))
                .findFirst().orElseThrow(() -> new AssertionError("no ModuleVerdict of the stream-stall fix: " + verdicts));
        assertEquals("applied", fix.getString(EventFields.VERDICT), fix.toString());
        assertTrue(serverLog.contains("fix.kwik-stream-stall for kwik " + version + " in " + loader + ": applied ("
                + fix.getString(EventFields.REASON) + ")"), fix + "\n" + serverLog);
    }

    @Test
    void stockConnectionsAreObservedToo() throws Exception {
        Path rec = dir.resolve("stock.jfr");
        try (ServerProcess server = ServerProcess.start(dir, "cc=stock;jfr=" + rec, ANSWER)) {
            assertEquals(ANSWER, ServerProcess.client(server.port, UPLOAD, 0, 90, () -> { }),
                    server.output());
            Thread.sleep(2_500);
        }
        RecordingReport s = RecordingReport.read(rec);
        assertNull(s.problem(), "the whole recording was readable");
        assertEquals(0, s.count(EventNames.SEND_LOOP_SPIN), s.counts().toString());
        assertEquals(0, s.count(EventNames.ACK_ONLY_SEND_LOOP), s.counts().toString());
        assertTrue(s.events(EventNames.CONGESTION_STATE).stream()
                .anyMatch(e -> "stock".equals(e.getString(EventFields.ALGORITHM)) && e.getLong(EventFields.CONGESTION_WINDOW) > 0), s.counts().toString());
        assertTrue(s.events(EventNames.SEND_PATH_ALLOCATION).stream()
                .anyMatch(e -> "sender".equals(e.getString(EventFields.PATH)) && e.getLong(EventFields.PACKETS) > 0), s.counts().toString());
    }

    private static long waitForLog(ServerProcess server, String text, long since, int seconds) throws Exception {
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        while (System.nanoTime() < deadline) {
            if (server.output().contains(text)) {
                return (System.nanoTime() - since) / 1_000_000;
            }
            Thread.sleep(100);
        }
        return -1;
    }
}
