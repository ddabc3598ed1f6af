package dev.ccagent.it.kwik;

import dev.ccagent.it.Acceptance;
import dev.ccagent.it.AgentCli;
import dev.ccagent.jfr.EventFields;
import dev.ccagent.jfr.EventNames;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * kwik 0.10.9's stream-send race (StreamOutputStreamImpl.scheduleSendStreamFrameRequest) and the
 * agent's fix, on by default, reproduced deterministically: all three servers run the test-only
 * {@link StallWidener}, which pauses the writing thread for 2 ms between kwik queueing a send request
 * and counting it (timing only, no logic change). Four 2 MB downloads each; a transfer whose byte
 * count does not move for {@value #STALL_SECONDS} s ({@value #STALL_SECONDS_OFF} s with the fix off) is declared stalled.
 * <ul>
 *   <li>unpatched kwik: every transfer stalls (measured 4 of 4, at the first packet);</li>
 *   <li>the agent with the option not named (its default): none stalls, all intact (measured 0 of 4 with
 *       {@code =on}), and one start line says the fix is on by default, why, and how to turn it off;</li>
 *   <li>{@code fix.kwik-stream-stall=off}: kwik's class is not touched and transfers stall again.</li>
 * </ul>
 * The two servers with the agent record ({@code jfr=}); the JDK's recording parser finds a
 * {@code dev.ccagent.StreamStall} episode for every transfer the client declared stalled with the fix
 * off, committed while it lasted, and none with the fix at its default; the Prometheus exporter's
 * {@code ccagent_stream_stalls_total} counts the episodes.
 * Without the widener the race depends on the writer being preempted (or still interpreted) inside
 * a few instructions: on a loaded 2-core machine it froze 5 of 7 single 50 MB downloads, 4/4, 1/4,
 * 0/4 and 0/4 of four parallel 25 MB downloads in different runs, and 6 of ~22 small transfers on
 * freshly started servers; too erratic to assert on, hence the widener.
 */
class KwikStreamStallTest {

    static final int STALL_SECONDS = 5;
    /**
     * With the fix off the server must record each stall before the client gives up: its episode starts at
     * most one 1 s sample after the stall plus max(3 x PTO, 1 s) rounded up to the next sample; kwik's PTO
     * after a cold JVM's handshake was up to 800 ms (threshold 2.4 s) in 23 episodes, so 10 s leaves room.
     */
    static final int STALL_SECONDS_OFF = 10;
    static final int CONNECTIONS = 4;
    static final String BYTES = "2000000";

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void unpatchedKwikStallsTheDefaultFixPreventsItAndOffRestoresKwik() throws Exception {
        Path dir = KwikIt.workDir("stream-stall");
        try (KwikIt.Server server = KwikIt.awaitPort(KwikIt.launchServer(dir, "server-unpatched", null, true))) {
            KwikIt.ClientRun run = workload(dir, "client-unpatched", server, STALL_SECONDS);
            int stalls = count(run.stdout, "STALL ");
            System.out.printf("[it] stream stall: unpatched kwik, %d of %d transfers stalled%n", stalls, CONNECTIONS);
            assertTrue(server.jvm.stderr().contains("[stall-widener] widened tech.kwik.core.stream.StreamOutputStreamImpl"),
                    server.jvm.describe());
            // the widener holds kwik's race open: 4 of 4 stalled in 36 of 37 such checks (3 of 4 once; 20 unpatched, 17 with =off;
            // 2026-12-04); failing needs 3 of the 4 to escape it, 1 of 148 did: 4p^3 < 4e-6 a check at p < 0.01
            assertTrue(stalls >= CONNECTIONS / 2, "the reproduction did not reproduce:\n" + run.describe);
        }
        // the agent as an operator attaches it without naming the option: the fix is on, and says why
        Path defaultRec = recording(dir, "server-default.jfr");
        try (KwikIt.Server server = KwikIt.awaitPort(KwikIt.launchServer(dir, "server-default", "log=debug;jfr=" + defaultRec, true))) {
            KwikIt.ClientRun run = workload(dir, "client-default", server, STALL_SECONDS);
            int stalls = count(run.stdout, "STALL ");
            System.out.printf("[it] stream stall: the agent's default, %d of %d transfers stalled%n", stalls, CONNECTIONS);
            String stderr = server.jvm.stderr();
            assertTrue(stderr.contains("[stall-widener] widened tech.kwik.core.stream.StreamOutputStreamImpl")
                    && stderr.contains("[ccagent] DEBUG instrumented tech.kwik.core.stream.StreamOutputStreamImpl"), stderr);
            assertTrue(java.util.regex.Pattern.compile("fix\\.kwik-stream-stall (for kwik|version) 0\\.10\\.9 in app@\\p{XDigit}+:"
                    + " applied \\(on by default: kwik's own stream-send race .*fix\\.kwik-stream-stall=off turns it off\\)")
                    .matcher(stderr).find(), "one start line says the fix is on, why, and how to turn it off:\n" + stderr);
            assertEquals(0, stalls, run.describe + server.jvm.describe());
            assertTrue(run.allOk(CONNECTIONS), run.describe + server.jvm.describe());
            List<RecordedEvent> events = exitAndRead(server, defaultRec);
            assertTrue(events.stream().anyMatch(e -> e.getEventType().getName().equals(EventNames.AGENT_LIFECYCLE)),
                    "the recording is the agent's");
            // with the fix no stream stalls: a false event needs one of kwik's threads held inside a few
            // instructions for over 1 s, across two samples, with nothing in flight (estimated under 1e-6 a run)
            assertEquals(List.of(), stalls(events), "no StreamStall with the fix on");
        }
        // fix.kwik-stream-stall=off: kwik's class is left as released, and the race is back
        Path offRec = recording(dir, "server-off.jfr");
        Path exporterConfig = dir.resolve("ccagent.yml");
        try (InputStream in = KwikStreamStallTest.class.getResourceAsStream("/prometheus/ccagent.yml")) {
            assertNotNull(in, "prometheus/ccagent.yml not on the test class path");
            Files.copy(in, exporterConfig, StandardCopyOption.REPLACE_EXISTING);
        }
        int metricsPort = KwikArmMetricsTest.freePort();
        try (KwikIt.Server server = KwikIt.awaitPort(KwikIt.launchServer(dir, "server-off",
                "fix.kwik-stream-stall=off;log=debug;jfr=" + offRec, true, b -> b.javaagent(KwikArmMetricsTest.exporterJar(),
                        "127.0.0.1:" + metricsPort + ":" + exporterConfig.toAbsolutePath())))) {
            KwikIt.ClientRun run = workload(dir, "client-off", server, STALL_SECONDS_OFF);
            int stalls = count(run.stdout, "STALL ");
            System.out.printf("[it] stream stall: fix.kwik-stream-stall=off, %d of %d transfers stalled%n", stalls, CONNECTIONS);
            String stderr = server.jvm.stderr();
            assertTrue(!stderr.contains("instrumented tech.kwik.core.stream.StreamOutputStreamImpl")
                    && !stderr.contains("fix.kwik-stream-stall for kwik") && !stderr.contains("fix.kwik-stream-stall version"),
                    stderr);
            // the widener holds kwik's race open: 4 of 4 stalled in 36 of 37 such checks (3 of 4 once; 20 unpatched, 17 with =off;
            // 2026-12-04); failing needs 3 of the 4 to escape it, 1 of 148 did: 4p^3 < 4e-6 a check at p < 0.01
            assertTrue(stalls >= CONNECTIONS / 2, "off did not restore kwik's own behaviour:\n" + run.describe);
            double counted = scrapeStreamStalls(metricsPort, stalls, server);
            awaitEpisodesEnded(server);
            List<RecordedEvent> events = stalls(exitAndRead(server, offRec));
            checkStallsRecorded(run, events, counted, server.jvm.describe());
        }
    }

    /**
     * Detach keeps the fix (issue 34): the widened race as above, on one server. With the agent at start
     * (the fix at its default) no transfer stalls; after {@code ccagent detach} none stalls either, where
     * a detach that took the fix out with the rest would leave kwik's race widened and about 4 of 4
     * stalling (the odds in the first test); the detach line and {@code status} name the class that keeps
     * it. Then {@code ccagent attach} with {@code fix.kwik-stream-stall=off} replaces the kept fix with
     * none, and the race is back. Evidence from outside: the client's stalls. An acceptance test since 2026-12-07
     * for the gate's time (about 29 s): the gate keeps the fix and its off switch
     * ({@link #unpatchedKwikStallsTheDefaultFixPreventsItAndOffRestoresKwik}) and the detach ({@code KwikDetachTest}).
     */
    @Test
    @Acceptance("the widened race's stalls after a detach (0 of 4) and after an attach with the fix off")
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void detachKeepsTheFixAndAnAttachWithItOffTakesItOut() throws Exception {
        Path dir = KwikIt.workDir("stream-stall-detach");
        try (KwikIt.Server server = KwikIt.awaitPort(KwikIt.launchServer(dir, "server", "log=debug", true))) {
            String pid = Long.toString(server.jvm.pid());
            KwikIt.ClientRun attached = workload(dir, "client-attached", server, STALL_SECONDS);
            assertEquals(0, count(attached.stdout, "STALL "), attached.describe + server.jvm.describe());

            AgentCli.Result detach = CliCommandsTest.cli(dir, "detach", "detach", pid);
            assertEquals(0, detach.exit(), detach.all() + server.jvm.describe());
            KwikIt.ClientRun detached = workload(dir, "client-detached", server, STALL_SECONDS);
            int stalls = count(detached.stdout, "STALL ");
            System.out.printf("[it] stream stall: after detach, %d of %d transfers stalled%n", stalls, CONNECTIONS);
            // a detach that took the fix out: 4 of 4 stalled in 36 of 37 checks of the widened race (above); a stall
            // with the fix there needs a loopback transfer without a byte for 5 s (none in the default phases' runs)
            assertEquals(0, stalls, "the fix stays after the detach:\n" + detached.describe + server.jvm.describe());
            assertTrue(detached.allOk(CONNECTIONS), detached.describe + server.jvm.describe());
            String kept = "the fixes of the libraries' own bugs stay in tech.kwik.core.stream.StreamOutputStreamImpl in app@";
            assertTrue(server.jvm.stderr().contains("INFO detached: ") && server.jvm.stderr().contains(kept),
                    "the detach line names what it keeps:\n" + server.jvm.stderr());
            AgentCli.Result status = CliCommandsTest.cli(dir, "status", "status", pid);
            assertTrue(status.out().contains("active:        false") && status.out().contains("detached: " + kept),
                    "status names what the detach kept:\n" + status.all());

            AgentCli.Result off = CliCommandsTest.cli(dir, "attach-off", "attach", pid, "fix.kwik-stream-stall=off;log=debug");
            assertEquals(0, off.exit(), off.all() + server.jvm.describe());
            KwikIt.ClientRun unfixed = workload(dir, "client-off", server, STALL_SECONDS);
            int back = count(unfixed.stdout, "STALL ");
            System.out.printf("[it] stream stall: attached again with the fix off, %d of %d transfers stalled%n", back, CONNECTIONS);
            // the odds of the first test's checks: 4p^3 < 4e-6 at p < 0.01
            assertTrue(back >= CONNECTIONS / 2, "an attach with the fix off takes the kept fix out:\n" + unfixed.describe
                    + server.jvm.describe());
        }
    }

    /**
     * The recording of the server whose fix is off, read by the JDK's parser, against what the client saw:
     * every transfer the client declared stalled has a StreamStall episode on its connection (the odcid is
     * the same at both ends), committed while the stall lasted (an {@code ongoing} event before the
     * episode's last one), for kwik as run (fix off, bytes waiting); no transfer the client completed has
     * one; the Prometheus counter counts the recording's episodes.
     */
    static void checkStallsRecorded(KwikIt.ClientRun run, List<RecordedEvent> events, double counted, String describe) {
        Map<Long, List<RecordedEvent>> episodes = new TreeMap<>();
        for (RecordedEvent e : events) {
            episodes.computeIfAbsent(e.getLong(EventFields.EPISODE_ID), k -> new ArrayList<>()).add(e);
        }
        Set<String> stalled = new TreeSet<>();
        Set<String> completed = new TreeSet<>();
        for (Matcher m : run.results) {
            if ("true".equals(m.group(7))) {
                completed.add(m.group(2));
            } else if (m.group(8) != null && m.group(8).startsWith("stalled")) {
                stalled.add(m.group(2));
            }
        }
        String all = events.stream().map(RecordedEvent::toString).collect(Collectors.joining("\n"));
        for (List<RecordedEvent> ep : episodes.values()) {
            ep.sort(Comparator.comparing(RecordedEvent::getEndTime));
            RecordedEvent first = ep.get(0);
            RecordedEvent last = ep.get(ep.size() - 1);
            String conn = first.getString(EventFields.CONNECTION_ID);
            System.out.printf("[it] stream stall: connection %s stream %d, %d B waiting at offset %d, detected after %d ms,"
                            + " recorded %d events, lasted %.1f s, ended by %s%n", conn, first.getLong(EventFields.STREAM_ID),
                    first.getLong(EventFields.BYTES_WAITING), first.getLong(EventFields.STREAM_OFFSET),
                    first.getDuration(EventFields.DETECTED_AFTER).toMillis(), ep.size(),
                    last.getDuration(EventFields.EPISODE_DURATION).toMillis() / 1e3, last.getString(EventFields.ENDED_BY));
            for (RecordedEvent e : ep) {
                assertEquals("kwik", e.getString(EventFields.LIBRARY), e.toString());
                assertEquals(conn, e.getString(EventFields.CONNECTION_ID), e.toString());
                assertFalse(e.getBoolean(EventFields.FIX_ON), "the fix is off: " + e);
                // the widener stalls a 32 KiB write after one packet of it: 31,547-31,553 B waiting in all 31 episodes
                // of 8 runs (2026-12-04; 30 at the first write, 1 at 1.4 MB), never a FIN or resend alone: no chance in it
                assertTrue(e.getLong(EventFields.BYTES_WAITING) > 0 && e.getLong(EventFields.STREAM_ID) >= 0, e.toString());
                assertTrue(e.getDuration(EventFields.DETECTED_AFTER).toMillis() >= 1000, "max(3 x PTO, 1 s): " + e);
            }
            assertFalse(completed.contains(conn), "a StreamStall on a connection whose transfer completed:\n" + all + describe);
            assertTrue(ep.stream().anyMatch(e -> "ongoing".equals(e.getString(EventFields.ENDED_BY))
                    && e.getEndTime().isBefore(last.getEndTime())), "committed while the stall lasted: " + ep);
            assertNotEquals("ongoing", last.getString(EventFields.ENDED_BY), "the stall ended with its connection: " + ep);
        }
        Set<String> recorded = episodes.values().stream().map(ep -> ep.get(0).getString(EventFields.CONNECTION_ID))
                .collect(Collectors.toCollection(TreeSet::new));
        // each stall lasts until the client gives up 10 s after its last byte; the server's episode started 1.0-3.4 s
        // into it (threshold 1.0-2.4 s, 23 episodes in 6 runs, 2026-12-04): a miss needs kwik's loopback PTO over 2.7 s
        // or the detector's 1 s tick about 5 s late (estimated under 1e-4 a stalled transfer; figures printed above)
        assertTrue(recorded.containsAll(stalled), "every stalled transfer in the recording: stalled " + stalled
                + ", recorded " + recorded + "\n" + all + describe);
        assertEquals(episodes.size(), counted, 0.0, "ccagent_stream_stalls_total counts the recording's episodes");
    }

    /**
     * Before the server exits: the last connections' episodes end at the detector's first 1 s sample after the
     * client's close reached the server; an exit before it would leave them {@code ongoing} in the recording.
     * Waits (15 s at most) until the server's log has an end line for every start line.
     */
    static void awaitEpisodesEnded(KwikIt.Server server) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (System.nanoTime() < deadline) {
            List<String> lines = server.jvm.stderr().lines().filter(l -> l.contains("stream stall on kwik connection"))
                    .collect(Collectors.toList());
            long ended = lines.stream().filter(l -> l.contains(" ended (")).count();
            if (ended * 2 == lines.size()) {
                return;
            }
            Thread.sleep(200);
        }
    }

    /** {@code ccagent_stream_stalls_total} from the Prometheus exporter, once it reaches {@code atLeast} (15 s at most). */
    static double scrapeStreamStalls(int port, int atLeast, KwikIt.Server server) throws Exception {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        Pattern series = Pattern.compile("(?m)^ccagent_stream_stalls_total(?:\\{[^}]*})? (\\S+)$");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        String body = "";
        double value = -1;
        do {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode(), r.body());
            body = r.body();
            Matcher m = series.matcher(body);
            value = m.find() ? Double.parseDouble(m.group(1)) : -1;
            if (value >= atLeast) {
                break;
            }
            Thread.sleep(500);
        } while (System.nanoTime() < deadline);
        System.out.printf("[it] stream stall: ccagent_stream_stalls_total %.0f%n", value);
        assertTrue(value >= 0, "ccagent_stream_stalls_total not exported:\n" + body + server.jvm.describe());
        return value;
    }

    private static Path recording(Path dir, String name) throws java.io.IOException {
        Path rec = dir.resolve(name).toAbsolutePath();
        Files.deleteIfExists(rec);
        return rec;
    }

    /** Lets the server exit (the agent writes its recording) and reads the recording. */
    private static List<RecordedEvent> exitAndRead(KwikIt.Server server, Path rec) throws Exception {
        server.jvm.closeStdin();
        assertEquals(0, server.jvm.waitFor(Duration.ofSeconds(60)), server.jvm.describe());
        return RecordingFile.readAllEvents(rec);
    }

    private static List<RecordedEvent> stalls(List<RecordedEvent> events) {
        return events.stream().filter(e -> e.getEventType().getName().equals(EventNames.STREAM_STALL))
                .collect(Collectors.toList());
    }

    private static KwikIt.ClientRun workload(Path dir, String name, KwikIt.Server server, int stallSeconds) throws Exception {
        // the clients as released, without any agent, as the reproduction was measured (4 of 4 and 0 of 4)
        return KwikIt.runClient(dir, name, KwikIt.NO_AGENT, Duration.ofSeconds(150),
                "--port", Integer.toString(server.port), "--mode", "down", "--bytes", BYTES,
                "--connections", Integer.toString(CONNECTIONS), "--parallel", "2",
                "--stall-seconds", Integer.toString(stallSeconds), "--seed", "11");
    }

    private static int count(String text, String what) {
        int n = 0;
        for (int i = text.indexOf(what); i >= 0; i = text.indexOf(what, i + 1)) {
            n++;
        }
        return n;
    }
}
