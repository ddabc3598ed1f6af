package dev.ccagent.agent.detect;

import dev.ccagent.jfr.EventFields;
import dev.ccagent.jfr.EventNames;
import dev.ccagent.agent.connection.SendTelemetry;
import dev.ccagent.agent.config.AgentArgs;
import dev.ccagent.jfr.JfrSwitch;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The running detector (its own timer, real threads, a real JFR recording read back with the JDK's
 * parser): a connection's windows cover it from its sender's first iteration to its close, so a
 * connection shorter than one window, and the last window of a longer one whose sender thread has
 * ended by the next tick, are recorded; a short window is not judged on its rate alone.
 */
class SpinDetectorTest {

    @TempDir
    Path dir;

    /** The test's live connections, as a library module would hand them to the detector. */
    static final Map<SendTelemetry, String> LIVE = new ConcurrentHashMap<>();

    /** Held here: the detector holds its sources weakly. */
    static final SpinDetector.TelemetrySource SOURCE = action -> LIVE.forEach((t, algorithm) -> action.accept(algorithm, t));

    static {
        SpinDetector.addSource(SOURCE);
    }

    private Recording recording;
    private static volatile Object sink;

    @BeforeEach
    void start() {
        JfrSwitch.install();
        recording = new Recording();
        recording.enable(EventNames.SEND_PATH_ALLOCATION);
        recording.enable(EventNames.SEND_LOOP_SPIN);
        recording.enable(EventNames.ACK_ONLY_SEND_LOOP);
        recording.start();
        JfrSwitch.refresh();
        SpinDetector.apply(AgentArgs.parse("detect=on").config());
    }

    @AfterEach
    void stop() {
        SpinDetector.stop();
        LIVE.clear();
        recording.close();
    }

    /** A sender thread of its own: {@code loops} iterations, each sending a datagram and allocating {@code bytes}. */
    static long[] send(SendTelemetry t, int loops, int bytes, long pauseNanos, boolean close) throws Exception {
        long[] allocatedAtClose = new long[1];
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        Thread sender = new Thread(() -> {
            for (int i = 0; i < loops; i++) {
                long before = t.loopEnter();
                sink = new byte[bytes];
                t.datagramSent();
                t.loopExit(before);
                if (pauseNanos > 0) {
                    java.util.concurrent.locks.LockSupport.parkNanos(pauseNanos);
                }
            }
            if (close) {
                allocatedAtClose[0] = threads.getThreadAllocatedBytes(Thread.currentThread().getId());
                SpinDetector.connectionClosed(t, "test");
            }
        }, "test-sender");
        sender.start();
        sender.join();
        return allocatedAtClose;
    }

    List<RecordedEvent> events(String name) throws Exception {
        Path file = dir.resolve("r.jfr");
        recording.dump(file);
        return RecordingFile.readAllEvents(file).stream()
                .filter(e -> e.getEventType().getName().equals(name)).collect(Collectors.toList());
    }

    /** A connection with a sender thread of its own; {@code live}: the detector sees it while it runs. */
    static SendTelemetry connection(String id, boolean live) {
        SendTelemetry t = new SendTelemetry("test", true);
        t.setConnectionId(id);
        if (live) {
            LIVE.put(t, "test");
        }
        return t;
    }

    /** Runs {@code loop} on a sender thread of its own, then closes the connection there, and waits for it. */
    static void runThenClose(SendTelemetry t, Runnable loop) throws InterruptedException {
        Thread sender = new Thread(() -> {
            loop.run();
            SpinDetector.connectionClosed(t, "test");
        }, "test-sender");
        sender.start();
        sender.join();
    }

    /** One sender-loop iteration that sends nothing. */
    static void emptyWakeUp(SendTelemetry t) {
        long before = t.loopEnter();
        t.loopExit(before);
    }

    /**
     * The recording's {@code name} events once {@code done} holds for them, read again every 200 ms. A closed
     * connection's last window is recorded at the detector's next tick, one window (1 s) after the close; the
     * 10 s deadline is no bound a late tick has to meet (until 2026-12-06 the tests slept 1.6 windows, 0.6 s of
     * room), and a test that waits for what it then checks cannot pass early by reading too soon.
     */
    List<RecordedEvent> awaitEvents(String name, java.util.function.Predicate<List<RecordedEvent>> done) throws Exception {
        long deadline = System.nanoTime() + 10_000_000_000L;
        List<RecordedEvent> found = events(name);
        while (!done.test(found) && System.nanoTime() < deadline) {
            Thread.sleep(200);
            found = events(name);
        }
        return found;
    }

    /** The sender path's allocation windows of connection {@code id}. */
    static List<RecordedEvent> senderWindows(List<RecordedEvent> allocations, String id) {
        return allocations.stream()
                .filter(e -> id.equals(e.getString(EventFields.CONNECTION_ID)) && "sender".equals(e.getString(EventFields.PATH)))
                .collect(Collectors.toList());
    }

    static long packets(List<RecordedEvent> windows) {
        return windows.stream().mapToLong(e -> e.getLong(EventFields.PACKETS)).sum();
    }

    @Test
    void aConnectionShorterThanAWindowIsRecordedFromItsSendersStartToItsClose() throws Exception {
        SendTelemetry t = connection("c0ffee01", false);
        long started = System.nanoTime();
        long[] atClose = send(t, 100, 10_000, 0, true); // closes long before a window could elapse
        long lived = System.nanoTime() - started;
        List<RecordedEvent> sender = senderWindows(awaitEvents(EventNames.SEND_PATH_ALLOCATION,
                es -> !senderWindows(es, "c0ffee01").isEmpty()), "c0ffee01");
        assertEquals(1, sender.size(), "one window, from the sender's start to the close: " + sender);
        RecordedEvent e = sender.get(0);
        assertEquals(100, e.getLong(EventFields.PACKETS), e.toString());
        // everything the thread allocated until the close, and not much more (the close call itself)
        assertTrue(e.getLong(EventFields.ALLOCATED) >= 100 * 10_000L && e.getLong(EventFields.ALLOCATED) <= atClose[0], e + " vs " + atClose[0]);
        // exact: the window starts at the sender's first iteration and ends at its close, both inside "lived"
        assertTrue(e.getLong(EventFields.WINDOW) > 0 && e.getLong(EventFields.WINDOW) <= lived, e + " within the " + lived + " ns the sender lived");
        assertTrue(!e.getBoolean(EventFields.FLAGGED), e.toString());
    }

    @Test
    void theLastWindowOfALongerConnectionIsRecordedThoughItsSenderThreadHasEnded() throws Exception {
        SendTelemetry t = connection("c0ffee02", true);
        // ~1.8 s: at least one full window while the detector sees it live, then the close; the thread
        // has ended before the window after the close is evaluated
        long[] atClose = send(t, 600, 4_000, 3_000_000L, true);
        List<RecordedEvent> sender = senderWindows(awaitEvents(EventNames.SEND_PATH_ALLOCATION,
                es -> packets(senderWindows(es, "c0ffee02")) >= 600), "c0ffee02");
        assertTrue(sender.size() >= 2, "windows while it ran and the one ending at the close: " + sender);
        long allocated = sender.stream().mapToLong(e -> e.getLong(EventFields.ALLOCATED)).sum();
        long packets = sender.stream().mapToLong(e -> e.getLong(EventFields.PACKETS)).sum();
        assertEquals(600, packets, "every datagram in some window: " + sender);
        // the windows tile the connection: together they hold what the thread allocated until the close
        assertTrue(allocated >= 600 * 4_000L && allocated <= atClose[0], allocated + " of " + atClose[0]);
    }

    @Test
    void theLastWindowCountsNothingAfterTheClose() throws Exception {
        SendTelemetry t = connection("c0ffee06", true);
        // ~1.2 s of sending, the close, then the loop turns on (a kwik sender runs until its shutdown, after
        // the close): 300 more datagrams that the window ending at the close must not count
        runThenClose(t, () -> {
            for (int i = 0; i < 400; i++) {
                long before = t.loopEnter();
                t.datagramSent();
                t.loopExit(before);
                java.util.concurrent.locks.LockSupport.parkNanos(3_000_000L);
            }
        });
        for (int i = 0; i < 300; i++) {
            long before = t.loopEnter();
            t.datagramSent();
            t.loopExit(before);
        }
        // the window that ends at the close takes the count to 400; one that counted on would take it to 700
        List<RecordedEvent> sender = senderWindows(awaitEvents(EventNames.SEND_PATH_ALLOCATION,
                es -> packets(senderWindows(es, "c0ffee06")) >= 400), "c0ffee06");
        assertEquals(400, packets(sender),
                "the windows end at the close, and so do their counts: " + sender);
    }

    @Test
    void emptyWakeUpsBesideDataMovingAtTheLinksRateAreNoSpin() throws Exception {
        // an A/A canary's healthy 20 Mbit/s transfer at 1% loss had ~550 empty wake-ups a second unexplained
        // by received packets, beside ~1,700 data packets a second; here up to ~2,000 empty beside ~3,000
        SendTelemetry t = connection("c0ffee05", true);
        long[] sent = new long[1];
        runThenClose(t, () -> {
            long end = System.nanoTime() + 2_200_000_000L;
            while (System.nanoTime() < end) {
                for (int i = 0; i < 3; i++) {
                    long before = t.loopEnter();
                    t.datagramSent();
                    t.packetInFlight(1252);
                    t.loopExit(before);
                    sent[0]++;
                }
                emptyWakeUp(t);
                emptyWakeUp(t);
                java.util.concurrent.locks.LockSupport.parkNanos(1_000_000L);
            }
        });
        // every window judged: their allocation events hold every datagram (a window's spin verdict is committed
        // before its allocation event, in the same tick)
        List<RecordedEvent> windows = senderWindows(awaitEvents(EventNames.SEND_PATH_ALLOCATION,
                es -> packets(senderWindows(es, "c0ffee05")) >= sent[0]), "c0ffee05");
        assertEquals(sent[0], packets(windows), "every datagram in a judged window: " + windows);
        // exact: 2 empty wake-ups per 3 data packets, where the rule needs more than 10 per packet
        assertEquals(List.of(), events(EventNames.SEND_LOOP_SPIN), "data moved beside the empty wake-ups");
    }

    @Test
    void aShortWindowIsNotJudgedOnItsRateAlone() throws Exception {
        SendTelemetry t = connection("c0ffee03", true);
        // 400 wake-ups that send nothing in ~0.6 s: above 500 per second, below a full window's 500
        runThenClose(t, () -> {
            for (int i = 0; i < 400; i++) {
                emptyWakeUp(t);
                java.util.concurrent.locks.LockSupport.parkNanos(1_500_000L);
            }
        });
        // and a full window's worth in the same time is one: the control, started after the first closed, is flagged
        // at the tick that judges the first one's last window or a later one
        SendTelemetry spinning = connection("c0ffee04", true);
        runThenClose(spinning, () -> {
            long end = System.nanoTime() + 1_600_000_000L;
            while (System.nanoTime() < end) {
                emptyWakeUp(spinning);
                java.util.concurrent.locks.LockSupport.parkNanos(500_000L);
            }
        });
        // needs 500 empty wake-ups in a window (judged as at least 1 s). Measured (the WARN line, 16 runs to 2026-12-04):
        // 1,118-1,242 in the flagged 0.7 s window, 1,567-1,695 a second; it fails only if the parks run 2.2x their
        // measured length throughout, far outside that +-4% spread: under 1 in 10,000 a run
        awaitEvents(EventNames.SEND_LOOP_SPIN, es -> es.stream()
                .anyMatch(e -> "c0ffee04".equals(e.getString(EventFields.CONNECTION_ID))));
        Thread.sleep(200); // read again past the rest of that tick, which takes microseconds
        List<RecordedEvent> spins = events(EventNames.SEND_LOOP_SPIN);
        // exact: 400 empty wake-ups in all, under the 500 any window needs, however the parks run
        assertEquals(List.of(), spins.stream().filter(e -> "c0ffee03".equals(e.getString(EventFields.CONNECTION_ID)))
                .collect(Collectors.toList()), "400 empty wake-ups are no spin");
        assertTrue(spins.stream()
                .anyMatch(e -> "c0ffee04".equals(e.getString(EventFields.CONNECTION_ID))), "the control is flagged");
    }

    /**
     * The recording budget: 30 active connections under {@code jfr.state-connections=10} get their unflagged
     * allocation windows in rotation, at most 10 connections a window, each event weighted 3. The windows are
     * told apart by time (the detector writes a window's events within milliseconds, windows 1 s apart).
     */
    @Test
    void unflaggedWindowsBeyondTheBudgetAreARotatingWeightedShare() throws Exception {
        SpinDetector.apply(AgentArgs.parse("detect=on;jfr.state-connections=10").config());
        Thread idle = new Thread(() -> java.util.concurrent.locks.LockSupport.parkNanos(20_000_000_000L), "test-idle-sender");
        idle.setDaemon(true);
        idle.start();
        List<SendTelemetry> budgeted = new java.util.ArrayList<>();
        for (int i = 0; i < 30; i++) {
            SendTelemetry t = connection(String.format("b%02d", i), true);
            t.senderThreadId = idle.getId(); // allocates nothing: never flagged
            t.senderStartNanos = System.nanoTime() - 1_000_000_000L;
            budgeted.add(t);
        }
        List<RecordedEvent> all;
        long deadline = System.nanoTime() + 12_000_000_000L;
        do {
            for (int i = 0; i < 10; i++) {
                budgeted.forEach(t -> t.datagramsSent++); // active in every window
                Thread.sleep(100);
            }
            all = events(EventNames.SEND_PATH_ALLOCATION).stream()
                    .filter(e -> e.getString(EventFields.CONNECTION_ID).startsWith("b")).collect(Collectors.toList());
        } while (windowsOf(all).size() < 8 && System.nanoTime() < deadline);
        idle.interrupt();
        List<List<RecordedEvent>> windows = windowsOf(all);
        assertTrue(windows.size() >= 8, "8 windows written in 12 s: " + windows.size());
        for (List<RecordedEvent> w : windows) {
            assertTrue(w.size() <= 10, "at most the budget a window: " + w.size());
            assertTrue(w.stream().noneMatch(e -> e.getBoolean(EventFields.FLAGGED)));
        }
        // from the third window on, the detector knows the 30 (the first may have counted fewer)
        for (int k = 2; k < windows.size() - 1; k++) {
            windows.get(k).forEach(e -> assertEquals(3.0, e.getDouble(EventFields.WEIGHT), 0));
            if (k + 3 <= windows.size() - 1) {
                java.util.Set<String> seen = new java.util.HashSet<>();
                for (int j = k; j < k + 3; j++) {
                    windows.get(j).forEach(e -> seen.add(e.getString(EventFields.CONNECTION_ID)));
                }
                assertEquals(30, seen.size(), "every connection within 3 windows from window " + k);
            }
        }
        budgeted.forEach(LIVE::remove);
    }

    /** Events grouped into detector windows: a gap of over 300 ms starts the next. */
    static List<List<RecordedEvent>> windowsOf(List<RecordedEvent> events) {
        List<RecordedEvent> sorted = new java.util.ArrayList<>(events);
        sorted.sort(java.util.Comparator.comparing(RecordedEvent::getEndTime));
        List<List<RecordedEvent>> windows = new java.util.ArrayList<>();
        java.time.Instant previous = null;
        for (RecordedEvent e : sorted) {
            if (previous == null || java.time.Duration.between(previous, e.getEndTime()).toMillis() > 300) {
                windows.add(new java.util.ArrayList<>());
            }
            windows.get(windows.size() - 1).add(e);
            previous = e.getEndTime();
        }
        return windows;
    }

    /**
     * A shared event loop: one thread serves three connections for {@code millis}, each turn sending a datagram
     * for each and allocating {@code bytesPerMilli} (the loop's other work included), then parking 1 ms.
     */
    /**
     * A loop thread that sends a datagram for each of {@code conns} a turn, a turn about every millisecond,
     * and allocates {@code bytesPerMilli} for every millisecond that passed: a park that oversleeps (a
     * loaded host; beside a forked-JVM test, 1 ms parks gave 124 and 70 MB/s of an intended 500) is made up
     * at the next turn, so the rate is the intended one whenever the thread gets the few percent of a CPU
     * that zeroing it takes.
     */
    static void loop(List<SendTelemetry> conns, long millis, int bytesPerMilli) throws InterruptedException {
        Thread loop = new Thread(() -> {
            long start = System.nanoTime();
            long until = start + millis * 1_000_000L;
            long allocated = 0;
            long now;
            while ((now = System.nanoTime()) < until) {
                for (SendTelemetry t : conns) {
                    long before = t.loopEnter();
                    t.datagramSent();
                    t.loopExit(before);
                }
                for (long due = ((now - start) / 1_000_000L + 1) * bytesPerMilli; allocated < due; allocated += bytesPerMilli) {
                    sink = new byte[bytesPerMilli];
                }
                java.util.concurrent.locks.LockSupport.parkNanos(1_000_000L);
            }
        }, "test-loop");
        loop.start();
        loop.join();
    }

    static List<SendTelemetry> loopConnections(String... ids) {
        List<SendTelemetry> conns = new java.util.ArrayList<>();
        for (String id : ids) {
            SendTelemetry t = new SendTelemetry("test", false); // a thread shared with other connections
            t.setConnectionId(id);
            LIVE.put(t, "test");
            conns.add(t);
        }
        return conns;
    }

    @Test
    void aSharedLoopsAllocationIsChargedOncePerLoopNotCopiedToEachConnection() throws Exception {
        List<SendTelemetry> conns = loopConnections("100p01", "100p02", "100p03");
        loop(conns, 3_200, 32 * 1024); // about 30 MB/s on the loop
        List<RecordedEvent> all = awaitEvents(EventNames.SEND_PATH_ALLOCATION,
                es -> es.stream().filter(e -> "event loop".equals(e.getString(EventFields.PATH))).count() >= 2);
        assertTrue(all.stream().noneMatch(e -> e.getString(EventFields.CONNECTION_ID).startsWith("100p")),
                "no connection is charged the loop's allocation: " + all);
        List<RecordedEvent> loopWindows = all.stream().filter(e -> "event loop".equals(e.getString(EventFields.PATH)))
                .collect(Collectors.toList());
        assertTrue(loopWindows.size() >= 2, all.toString());
        for (RecordedEvent e : loopWindows) {
            assertEquals("", e.getString(EventFields.CONNECTION_ID), e.toString());
            assertEquals("test-loop", e.getString(EventFields.THREAD_NAME), e.toString());
            assertEquals(3, e.getInt(EventFields.LOOP_CONNECTION_COUNT), e.toString());
            assertFalse(e.getBoolean(EventFields.FLAGGED), "30 MB/s is no storm: " + e);
        }
        // a full window: a second of the loop's turns, three datagrams a turn, about 30 MB
        assertTrue(loopWindows.stream().anyMatch(e -> e.getLong(EventFields.PACKETS) > 600
                && e.getLong(EventFields.ALLOCATED) > 10_000_000L), loopWindows.toString());
    }

    @Test
    void anAllocationStormOnASharedLoopIsTheLoopsNotAConnections() throws Exception {
        List<SendTelemetry> conns = loopConnections("100p04", "100p05");
        loop(conns, 3_200, 512 * 1024); // about 500 MB/s on the loop
        List<RecordedEvent> all = awaitEvents(EventNames.SEND_PATH_ALLOCATION,
                es -> es.stream().anyMatch(e -> e.getBoolean(EventFields.FLAGGED)));
        List<RecordedEvent> flagged = all.stream().filter(e -> e.getBoolean(EventFields.FLAGGED)).collect(Collectors.toList());
        assertFalse(flagged.isEmpty(), all.toString());
        for (RecordedEvent e : flagged) {
            assertEquals("event loop", e.getString(EventFields.PATH), e.toString());
            assertEquals("", e.getString(EventFields.CONNECTION_ID), e.toString());
            assertTrue(e.getLong(EventFields.ALLOCATION_RATE) > SpinDetector.ALLOC_RATE_FLAG, e.toString());
        }
    }
}
