package dev.ccagent.it.kwik;

import dev.ccagent.it.Acceptance;
import dev.ccagent.it.ForkedJvm;
import dev.ccagent.jfr.EventFields;
import dev.ccagent.jfr.EventNames;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Churn at scale (issue 34, item 6): one kwik server with {@code cc=bbr1;canary=cubic:50%} and a recording
 * serves {@value #CONNECTIONS} short connections one at a time, then {@value #CONNECTIONS} more
 * {@value #CONCURRENT} at a time. Checked from outside the agent:
 * <ul>
 *   <li>after each phase, once kwik has let go of its server connections and a full GC ran
 *       ({@code jcmd GC.class_histogram}), no agent object per connection is left (adapters, send telemetry, timer
 *       entries: 0) and the agent's heap is within 64 kB of what it was after the warm-up;</li>
 *   <li>the JDK's recording parser finds one {@code AlgorithmAssigned} and one closing {@code ConnectionSummary} per
 *       server connection, on both arms, bbr1 and cubic, near half each;</li>
 *   <li>every transfer that completes is intact (the client checks each byte); one that kwik's client gave up on
 *       the loaded machine (a handshake or a connection timed out) is counted by cause, at most
 *       {@value #MAX_FAILED_PERCENT}% a phase;</li>
 *   <li>the heap per live connection, re-measured at the end with {@value #HELD} connections held open: one adapter
 *       per kwik server connection, and the agent's objects per connection (exact, without their arrays) at most
 *       docs/safety.md's largest figure for these two algorithms (bbr1: 2,648 B) plus 10%.</li>
 * </ul>
 */
@Acceptance("a churn of 20,000 connections, one at a time and 200 at a time, with bbr1 and a canary")
class KwikChurnAtScaleTest {

    /** Connections per phase, at a time in the second phase, and held open at the end. */
    static final int CONNECTIONS = 10_000, CONCURRENT = 200, HELD = 200;
    /**
     * Transfers that may end without completing, per phase: kwik's client gives up a handshake or a connection it
     * hears nothing from (ConnectException, ConnectionLost). One at a time: 0 of 10,000 (2026-12-06). 200 at a time
     * on 2 cores beside two other builds (load average up to 47): 114 of 10,000 (101 ConnectionLost, 10 handshakes,
     * 3 others); after the client's fix 1 (StreamClosedException), 68 (57 ConnectException, 7 StreamClosedException,
     * 4 IOException) and 0 in three runs alone on the machine (load average up to 48), one at a time 0, 0 and 2
     * (ConnectException); the kernel drops datagrams at the server's full socket buffer under 200 concurrent connections
     * (KwikDetachAtScaleTest). A transfer that completes is checked byte for byte; none may be corrupted.
     */
    static final int MAX_FAILED_PERCENT = 5;
    /** docs/safety.md, "What a kwik connection costs in heap": bbr1's agent objects, the larger of bbr1 and cubic. */
    static final long AGENT_BYTES_PER_CONNECTION = 2_648;
    /** The agent's objects that exist once per connection. */
    private static final String[] PER_CONNECTION = {"dev.ccagent.agent.kwik.KwikControllerAdapter",
        "dev.ccagent.agent.connection.SendTelemetry", "dev.ccagent.agent.runtime.WakeupTimer$Entry"};
    /** kwik's own server connection: the adapter is its controller and lives exactly as long. */
    private static final String KWIK_CONNECTION = "tech.kwik.core.server.impl.ServerConnectionImpl";
    /** The server's idle timeout: its held connections (the last step) must outlive a slow opening of the others. */
    static final int SERVER_IDLE_SECONDS = 600;
    /**
     * The wait after a phase's last close for kwik's connections and the agent's objects to go: the server's idle
     * timeout, which ends a connection whose client's CONNECTION_CLOSE was lost, and 40 s more (SafetyIt's
     * AFTER_CLOSE_SECONDS over kwik's default 30 s). SafetyIt's own 40 s is too short here: 200 at a time, kwik's
     * closing and draining states last 3 PTOs after an RTT of seconds on the loaded machine, and the agent's close
     * (the summary, at {@code SenderImpl.stop()}) comes at their start. 2026-12-06, 200 at a time: 5 adapters, 5
     * telemetries, 5 timer entries 40 s after the last close, every one of the 20,044 connections with its close
     * summary in the recording.
     */
    static final long AFTER_CLOSE_SECONDS = SERVER_IDLE_SECONDS + 40;

    @Test
    @Timeout(value = 3600, unit = TimeUnit.SECONDS)
    void twentyThousandConnectionsLeaveNothingBehind() throws Exception {
        Path dir = KwikIt.workDir("churn-at-scale");
        Path rec = KwikIt.freshFile(dir, "churn-at-scale.jfr");
        int served = 0;
        long timeouts = 0;
        long retried = 0;
        String agentArgs = "cc=bbr1;canary=cubic:50%;log=warn;fix.kwik-stream-stall=on;fix.kwik-loss-timer=on";
        try (KwikIt.Server server = SafetyIt.startServer(dir, "server", agentArgs + ";jfr.max-age=180min;jfr=" + rec, List.of(),
                "--idle-seconds", Integer.toString(SERVER_IDLE_SECONDS))) {
            long pid = server.jvm.pid();
            SafetyIt.warmUp(dir, "warm-up", server.port, 20, 20_000);
            served += 20;
            SafetyIt.AfterClose warm = SafetyIt.afterClose(pid, PER_CONNECTION);
            long baseline = SafetyIt.agentBytes(warm.histogram());
            System.out.printf("[it] churn at scale: after the warm-up the agent holds %d bytes%n", baseline);
            for (int parallel : new int[] {1, CONCURRENT}) {
                long started = System.nanoTime();
                KwikIt.ClientRun run = KwikIt.runClient(dir, "client-parallel-" + parallel, null, Duration.ofSeconds(2400),
                        "--port", Integer.toString(server.port), "--mode", "down", "--bytes", "2000",
                        "--connections", Integer.toString(CONNECTIONS), "--parallel", Integer.toString(parallel),
                        "--seed", Integer.toString(parallel), "--stall-seconds", "30", "--stall-retries", "3");
                double seconds = (System.nanoTime() - started) / 1e9;
                assertEquals(CONNECTIONS, run.results.size(), ForkedJvm.tail(run.stdout));
                assertTrue(!run.stdout.contains("MISMATCH"), "a transfer arrived corrupted: " + ForkedJvm.tail(run.stdout));
                // a transfer that did not complete: a handshake or a connection kwik's client timed out (ConnectException,
                // ConnectionLost), counted by cause and printed
                Map<String, Long> failed = new TreeMap<>();
                run.results.stream().filter(m -> !m.group(7).equals("true")).forEach(m -> failed.merge(
                        String.valueOf(m.group(8)).split("[:;]")[0], 1L, Long::sum));
                long failures = failed.values().stream().mapToLong(Long::longValue).sum();
                assertTrue(failures <= CONNECTIONS * MAX_FAILED_PERCENT / 100,
                        "parallel " + parallel + ": " + failed + "\n" + ForkedJvm.tail(run.stdout));
                served += CONNECTIONS;
                timeouts += failures;
                // a transfer without a byte for 30 s is abandoned and retried on a new connection (2 of 10,000 hung for
                // minutes 200 at a time, 2026-12-06): counted, printed, and part of the recording's connections
                retried += run.retries();
                // kwik's connections too: an adapter left while kwik still holds its connection is kwik's closing state
                SafetyIt.AfterClose after = SafetyIt.afterClose(pid, AFTER_CLOSE_SECONDS, PER_CONNECTION[0],
                        PER_CONNECTION[1], PER_CONNECTION[2], KWIK_CONNECTION);
                long agentBytes = SafetyIt.agentBytes(after.histogram());
                System.out.printf("[it] churn at scale: %d connections %d at a time in %.0f s (not completed: %s; retried"
                                + " after 30 s without a byte: %d, of them abandoned, not ended 10 s after their close: %d);"
                                + " %.1f s after the last close: kwik connections %d, adapters %d, telemetry %d, timer entries %d; agent heap"
                                + " %d bytes (%+d since the warm-up)%n", CONNECTIONS, parallel, seconds, failed, run.retries(),
                        run.stdout.lines().filter(l -> l.startsWith("ABANDONED conn=")).count(),
                        after.seconds(), after.instances(KWIK_CONNECTION), after.instances(PER_CONNECTION[0]), after.instances(PER_CONNECTION[1]),
                        after.instances(PER_CONNECTION[2]), agentBytes, agentBytes - baseline);
                for (String c : PER_CONNECTION) {
                    assertEquals(0, after.instances(c), c + " left after " + served + " connections ("
                            + after.instances(KWIK_CONNECTION) + " kwik server connections alive)");
                }
                assertTrue(agentBytes <= baseline + 64 * 1024, "the agent's heap grew: " + baseline + " -> " + agentBytes);
            }

            // the heap per live connection, at the end of the churn
            String before = ForkedJvm.jcmd(pid, "GC.class_histogram");
            try (ForkedJvm held = SafetyIt.hold(dir, "hold", server.port, HELD, 0)) {
                String holding = ForkedJvm.jcmd(pid, "GC.class_histogram");
                // the hold client retries a handshake that timed out after 30 s (RETRY lines); the server may have
                // completed the first one, which then lives until its idle timeout: the server holds HELD kwik
                // connections plus at most one per retry (2026-12-06: 201, one retry), each with its adapter
                long holdRetries = held.stdout().lines().filter(l -> l.startsWith("RETRY ")).count();
                long opened = SafetyIt.instances(holding, KWIK_CONNECTION) - SafetyIt.instances(before, KWIK_CONNECTION);
                double agentPer = (SafetyIt.agentBytes(holding) - SafetyIt.agentBytes(before)) / (double) opened;
                double heapPer = (SafetyIt.heapTotal(holding) - SafetyIt.heapTotal(before)) / (double) opened;
                System.out.printf("[it] churn at scale: %d idle connections held after the churn (%d kwik server"
                        + " connections, %d handshakes retried): agent objects %.0f B, whole heap %.1f kB per connection%n",
                        HELD, opened, holdRetries, agentPer, heapPer / 1024);
                assertTrue(opened >= HELD && opened <= HELD + holdRetries, "kwik server connections: " + opened);
                assertTrue(agentPer <= AGENT_BYTES_PER_CONNECTION * 1.1, "agent objects per live connection: " + agentPer);
                assertEquals(SafetyIt.instances(holding, KWIK_CONNECTION), SafetyIt.instances(holding, PER_CONNECTION[0]),
                        "one adapter per kwik server connection");
                retried += holdRetries;
                served += HELD;
                held.closeStdin();
                held.waitFor(Duration.ofSeconds(60));
            }
            // every connection's close summary is in the recording before the server exits: kwik's connections gone
            SafetyIt.AfterClose end = SafetyIt.afterClose(pid, AFTER_CLOSE_SECONDS, KWIK_CONNECTION);
            assertEquals(0, end.instances(KWIK_CONNECTION), "kwik server connections after the hold closed");
        }

        // the JDK's parser: one assignment and one closing summary per server connection, both arms. Summaries with
        // trigger "periodic" (summary.period, 10 s) come on top for a connection that lived longer than that (the
        // held ones, a slow one 200 at a time): 2026-12-06, 4,901 periodic beside 20,114 closing ones
        Map<String, Long> assigned = new TreeMap<>();
        java.util.Set<String> assignedIds = new java.util.HashSet<>();
        java.util.Set<String> closedIds = new java.util.HashSet<>();
        long closes = 0;
        long periodic = 0;
        try (RecordingFile file = new RecordingFile(rec)) {
            while (file.hasMoreEvents()) {
                RecordedEvent e = file.readEvent();
                String type = e.getEventType().getName();
                if (type.equals(EventNames.ALGORITHM_ASSIGNED) && "server".equals(e.getString(EventFields.ROLE))) {
                    assigned.merge(e.getString(EventFields.ALGORITHM), 1L, Long::sum);
                    assignedIds.add(e.getString(EventFields.CONNECTION_ID));
                } else if (type.equals(EventNames.CONNECTION_SUMMARY) && "close".equals(e.getString(EventFields.TRIGGER))) {
                    closes++;
                    closedIds.add(e.getString(EventFields.CONNECTION_ID));
                } else if (type.equals(EventNames.CONNECTION_SUMMARY)) {
                    periodic++;
                }
            }
        }
        long total = assigned.values().stream().mapToLong(Long::longValue).sum();
        System.out.printf("[it] churn at scale: %d connections served (%d not completed); the recording: assigned %s,"
                + " %d closing summaries (and %d others), %.1f MB%n", served, timeouts, assigned, closes, periodic,
                java.nio.file.Files.size(rec) / 1e6);
        assertEquals(List.of("bbr1", "cubic"), List.copyOf(assigned.keySet()), "both arms: " + assigned);
        // a connection the client gave up may or may not have reached the server, and an abandoned attempt is a
        // connection of its own: between served - timeouts and served + retried
        assertTrue(total >= served - timeouts && total <= served + retried, "one AlgorithmAssigned per connection: " + total);
        assertEquals(total, assignedIds.size(), "one AlgorithmAssigned per connection id");
        assertEquals(total, closes, "one closing ConnectionSummary per assigned connection");
        assertEquals(assignedIds, closedIds, "the closing summaries' connections are the assigned ones");
        // 50% each: over 20,000 connections the standard deviation is 71; 5 sd (355) from half is 5.7e-7 by chance
        for (long n : assigned.values()) {
            assertTrue(Math.abs(n - total / 2.0) <= 5 * Math.sqrt(total * 0.25), "the split: " + assigned);
        }
    }
}
