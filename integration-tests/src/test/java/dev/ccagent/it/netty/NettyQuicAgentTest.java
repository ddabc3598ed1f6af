package dev.ccagent.it.netty;

import dev.ccagent.jfr.EventFields;
import dev.ccagent.jfr.EventNames;
import dev.ccagent.agent.config.AgentArgs;
import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.select.AlgorithmSelector;
import dev.ccagent.report.RecordingReport;
import jdk.jfr.consumer.RecordedEvent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The agent on real Netty QUIC servers and clients (forked JVMs, 127.0.0.1): forced algorithms,
 * the canary split, the incubator package, the quiche-version guard, and pacing through the link emulator.
 */
class NettyQuicAgentTest {

    private static final Pattern CONNECTION = Pattern.compile(
            "netty connection side=server scid=([0-9a-f]+) arm=(\\w+):(\\w+) algorithm=(\\w+) quiche-id=(\\w+)");

    private static void assertIntact(NettyApp.Run r, int transfers) {
        assertEquals(0, r.exit, r.tail());
        assertTrue(r.out.contains("DONE ok=true"), r.tail());
        assertEquals(transfers, r.lines("crcOk=true").size(), r.tail());
        assertTrue(r.lines("crcOk=false").isEmpty(), r.tail());
    }

    private static List<String> serverConnections(NettyApp.Run r) {
        return r.lines("netty connection side=server");
    }

    /**
     * Each forced algorithm starts from a different application algorithm, and quiche's own window (as
     * the application samples it through Netty's path stats, 10 ms apart, 20 Mbit/s, 40 ms, 1% loss)
     * shows which one runs: reno halves on loss, cubic keeps 0.7, bbr does neither and hands out send
     * times ahead (its pacer).
     */
    @Test
    @Timeout(300)
    void forcedAlgorithmsRunInQuiche() throws Exception {
        String[][] cases = {{"reno", "0", "cubic"}, {"cubic", "1", "reno"}, {"bbr", "4", "reno"}};
        for (String[] c : cases) {
            NettyApp.Run r = NettyApp.run("forced-" + c[0], NettyApp.Version.CURRENT,
                    "netty.cc=" + c[0] + ";log=debug;netty.stats.period=100ms", 150,
                    "bytes=1572864", "app-cc=" + c[2], "probe=10", "link=20000000,20,1,0.01");
            assertIntact(r, 1);
            List<String> conns = serverConnections(r);
            assertEquals(1, conns.size(), r.tail());
            assertTrue(conns.get(0).contains("arm=default:" + c[0] + " algorithm=" + c[0] + " quiche-id=" + c[1]),
                    conns.get(0));
            java.util.Map<String, QuicheEvidence.Window> windows = QuicheEvidence.windows(r);
            assertEquals(1, windows.size(), r.tail());
            QuicheEvidence.Window w = windows.values().iterator().next();
            System.out.println("forced " + c[0] + " over the application's " + c[2] + ": " + w.line);
            long ahead = r.number("netty path side=server", "aheadSendTimes");
            long seen = r.number("netty path side=server", "sendTimes");
            System.out.printf(java.util.Locale.ROOT, "forced %s: %d of %d send times ahead%n", c[0], ahead, seen);
            assertTrue(seen > 500, r.tail());
            switch (c[0]) {
                case "reno":
                    w.assertReno();
                    assertEquals(0, ahead, "reno: no send time may be ahead");
                    break;
                case "cubic":
                    w.assertCubicLike();
                    assertEquals(0, ahead, "cubic: no send time may be ahead");
                    break;
                default:
                    w.assertNotReno();
                    // only bbr (gcongestion, with its pacer) hands out future send times. How many depends on
                    // quiche's bandwidth estimate (a send time 50 us ahead or more counts): 0.44-0.85 of them in 14
                    // runs, 0.088 in one gate run (2026-12-08, when the bound was a tenth); reno and cubic give 0.
                    // The bound, a hundredth, lies 8.8 times under the lowest seen (docs/testing.md)
                    assertTrue(ahead > seen / 100, "bbr: " + ahead + " of " + seen + " send times ahead");
            }
        }
    }

    @Test
    @Timeout(300)
    void canarySplitFollowsTheSelector() throws Exception {
        String args = "netty.canary=bbr:30%;log=debug;netty.stats.period=off";
        // 27 random ids at 30%: no bbr connection with probability 0.7^27 = 6.6e-5, all bbr 0.3^27 (24 gave 1.9e-4)
        int n = 27;
        NettyApp.Run r = NettyApp.run("canary", NettyApp.Version.CURRENT, args, 200,
                "connections=" + n, "bytes=131072", "app-cc=cubic");
        assertIntact(r, n);
        AgentConfig config = AgentArgs.parse(args).config();
        List<String> conns = serverConnections(r);
        assertEquals(n, conns.size(), r.tail());
        int bbr = 0;
        int predictedBbr = 0;
        for (String line : conns) {
            Matcher m = CONNECTION.matcher(line);
            assertTrue(m.find(), line);
            byte[] id = HexFormat.of().parseHex(m.group(1));
            AgentConfig.Arm predicted = AlgorithmSelector.select(config.netty().canaryArms(), config.netty().defaultArm(),
                    AlgorithmSelector.hash(id));
            assertEquals(predicted.label() + ":" + predicted.algorithm(), m.group(2) + ":" + m.group(3), line);
            String expected = predicted.isStock() ? "app" : predicted.algorithm();
            assertEquals(expected, m.group(4), line);
            if (expected.equals("bbr")) {
                predictedBbr++;
            }
            if (m.group(4).equals("bbr")) {
                bbr++;
                assertEquals("4", m.group(5), line);
            }
        }
        // the split is the selector's, connection by connection: the counts are exact, not a binomial bound
        assertEquals(predictedBbr, bbr, "bbr connections of " + n);
        assertTrue(bbr > 0 && bbr < n, "both arms need connections for this test to mean anything: " + bbr + " of " + n);
    }

    @Test
    @Timeout(200)
    void incubatorPackage() throws Exception {
        NettyApp.Run r = NettyApp.run("incubator", NettyApp.Version.INCUBATOR,
                "netty.cc=bbr;log=debug;netty.stats.period=100ms", 150, "bytes=4194304");
        assertIntact(r, 1);
        assertFalse(r.lines("Netty incubator QUIC 0.0.x (io.netty.incubator.codec.quic) version "
                + System.getProperty("netty.version.incubator")).isEmpty(), r.tail());
        List<String> conns = serverConnections(r);
        assertEquals(1, conns.size(), r.tail());
        assertTrue(conns.get(0).contains("algorithm=bbr quiche-id=4 quiche=0.25.0"), conns.get(0));
        assertTrue(r.number("netty path side=server", "aheadSendTimes") > 0, r.tail());
    }

    @Test
    @Timeout(200)
    void guardRefusesBbrOnQuiche0248() throws Exception {
        NettyApp.Run r = NettyApp.run("guard-4.2.10", NettyApp.Version.OLD,
                "netty.cc=bbr;log=debug;netty.stats.period=off", 150, "bytes=2097152", "app-cc=cubic");
        assertIntact(r, 1);
        assertFalse(r.lines("bundles quiche 0.24.8 (Netty's ids reno/cubic/bbr = 0/1/2)").isEmpty(), r.tail());
        assertFalse(r.lines("WARN netty: refusing bbr on io.netty.handler.codec.quic: quiche 0.24.8").isEmpty(),
                r.tail());
        // the refused swap is a fallback too (counted per cause, a dev.ccagent.Fallback event with its line)
        assertFalse(r.lines("WARN fallback: netty swap to bbr on quiche 0.24.8 failed; refused: quiche 0.24.8").isEmpty(),
                r.tail());
        List<String> conns = serverConnections(r);
        assertEquals(1, conns.size(), r.tail());
        assertTrue(conns.get(0).contains("algorithm=app quiche-id=app quiche=0.24.8 refused:"), conns.get(0));
        assertTrue(r.lines("panicked").isEmpty() && r.lines("fatal runtime error").isEmpty(), r.tail());
    }

    @Test
    @Timeout(300)
    void jfrRecordsAssignmentsAndPathStats() throws Exception {
        Path rec = NettyApp.WORK.resolve("netty-jfr.jfr").toAbsolutePath();
        Files.deleteIfExists(rec);
        int n = 4;
        NettyApp.Run r = NettyApp.run("jfr", NettyApp.Version.CURRENT,
                "netty.cc=cubic;netty.canary=bbr:50%;netty.initial-cwnd=20;netty.stats.period=200ms;log=debug;jfr=" + rec,
                200, "connections=" + n, "bytes=6291456", "app-cc=reno", "link=40000000,5,1,0");
        assertIntact(r, n);
        RecordingReport report = RecordingReport.read(rec);
        List<RecordedEvent> assigned = report.events(EventNames.ALGORITHM_ASSIGNED);
        // one per connection on each side
        assertEquals(2 * n, assigned.size(), assigned.toString());
        Set<String> serverIds = new HashSet<>();
        for (RecordedEvent e : assigned) {
            assertEquals("netty", e.getString(EventFields.LIBRARY));
            String role = e.getString(EventFields.ROLE);
            assertTrue(role.equals("server") || role.equals("client"), role);
            assertTrue(e.getString(EventFields.CONNECTION_ID).matches("[0-9a-f]{16,40}"), e.toString());
            String arm = e.getString(EventFields.CANARY_ARM);
            String algorithm = e.getString(EventFields.ALGORITHM);
            if (arm.equals("canary")) {
                assertEquals("bbr2_gcongestion", algorithm, e.toString());
                assertTrue(e.getString(EventFields.REASON).startsWith("canary split"), e.toString());
            } else {
                assertEquals("default", arm, e.toString());
                assertEquals("cubic", algorithm, e.toString());
                assertEquals("forced", e.getString(EventFields.REASON), e.toString());
            }
            assertTrue(e.getString(EventFields.OPTIONS).contains("initial-cwnd=20"), e.toString());
            assertTrue(e.getString(EventFields.OPTIONS).contains("pacing=none"), e.toString());
            if (role.equals("server")) {
                serverIds.add(e.getString(EventFields.CONNECTION_ID));
            }
        }
        assertEquals(n, serverIds.size(), assigned.toString());
        List<RecordedEvent> states = report.events(EventNames.CONGESTION_STATE);
        List<RecordedEvent> server = states.stream().filter(e -> serverIds.contains(e.getString(EventFields.CONNECTION_ID)))
                .collect(Collectors.toList());
        // 6 MiB at <= 40 Mbit/s takes >= 1.2 s per connection: several 200 ms samples each. The floors below are
        // physical, not chance: the emulator is never faster than its rate nor earlier than its 10 ms round trip, and
        // the close summary reads quiche's own count at the close (6 MiB served, checked by the client's CRC); the
        // figures are printed and their spread is in docs/testing.md's bounds table
        assertTrue(server.size() >= n * 2, "server CongestionState events: " + server.size());
        boolean sawLoadedWindow = false;
        java.util.LongSummaryStatistics srtts = new java.util.LongSummaryStatistics();
        long maxCwnd = 0;
        for (RecordedEvent e : server) {
            assertEquals("netty", e.getString(EventFields.LIBRARY));
            assertEquals("periodic", e.getString(EventFields.TRIGGER));
            String algorithm = e.getString(EventFields.ALGORITHM);
            assertTrue(algorithm.equals("cubic") || algorithm.equals("bbr2_gcongestion"), e.toString());
            assertEquals("quiche " + algorithm, e.getString(EventFields.MODE));
            long cwnd = e.getLong(EventFields.CONGESTION_WINDOW);
            long srtt = e.getLong(EventFields.SMOOTHED_RTT);
            assertTrue(cwnd > 0 && cwnd < (1L << 30), e.toString());
            // 10 ms emulated round trip; quiche's smoothed RTT stays within loaded-machine margins
            assertTrue(srtt >= 1_000_000L && srtt < 2_000_000_000L, e.toString());
            assertTrue(e.getLong(EventFields.PACKETS_LOST) >= 0 && e.getLong(EventFields.BANDWIDTH_ESTIMATE) >= 0, e.toString());
            sawLoadedWindow |= cwnd > 20 * 1350L && e.getLong(EventFields.BANDWIDTH_ESTIMATE) > 0;
            srtts.accept(srtt);
            maxCwnd = Math.max(maxCwnd, cwnd);
        }
        assertTrue(sawLoadedWindow, "a window beyond the initial one and a delivery rate: " + server);
        // every connection measured the same way (quiche's path stats): a close ConnectionSummary per server connection
        Map<String, RecordedEvent> closeSummaries = new java.util.HashMap<>();
        for (RecordedEvent e : report.events(EventNames.CONNECTION_SUMMARY)) {
            if (e.getString(EventFields.TRIGGER).equals("close") && serverIds.contains(e.getString(EventFields.CONNECTION_ID))) {
                assertTrue(closeSummaries.put(e.getString(EventFields.CONNECTION_ID), e) == null, "two close summaries: " + e);
            }
        }
        assertEquals(serverIds, closeSummaries.keySet(), "close summaries of the server connections");
        long minSent = Long.MAX_VALUE;
        for (RecordedEvent e : closeSummaries.values()) {
            minSent = Math.min(minSent, e.getLong(EventFields.BYTES_SENT));
            assertEquals("netty", e.getString(EventFields.LIBRARY), e.toString());
            assertEquals("ccagent", e.getString(EventFields.CONTROLLER), e.toString());
            String algorithm = e.getString(EventFields.ALGORITHM);
            assertTrue(algorithm.equals("cubic") || algorithm.equals("bbr2_gcongestion"), e.toString());
            // the last 200 ms sample before the close: most of the 6 MiB, never more than sent
            assertTrue(e.getLong(EventFields.BYTES_SENT) > 3_000_000 && e.getLong(EventFields.BYTES_ACKED) <= e.getLong(EventFields.BYTES_SENT), e.toString());
            assertTrue(e.getLong(EventFields.RTT_SAMPLES) > 0 && e.getLong(EventFields.RTT_P50) >= 1_000_000L, e.toString());
        }
        // send-path allocation on the event-loop threads, per loop and detector window: the loop's, not copied to
        // each of its connections
        assertTrue(report.events(EventNames.SEND_PATH_ALLOCATION).stream().noneMatch(e -> "netty".equals(e.getString(EventFields.LIBRARY))
                && !e.getString(EventFields.CONNECTION_ID).isEmpty()), "no Netty connection is charged its loop's allocation");
        List<RecordedEvent> alloc = report.events(EventNames.SEND_PATH_ALLOCATION).stream()
                .filter(e -> "netty".equals(e.getString(EventFields.LIBRARY))).collect(Collectors.toList());
        assertFalse(alloc.isEmpty(), "SendPathAllocation events of the event loops");
        for (RecordedEvent e : alloc) {
            assertEquals("event loop", e.getString(EventFields.PATH), e.toString());
            assertTrue(e.getString(EventFields.THREAD_NAME).contains("nioEventLoop") && e.getInt(EventFields.LOOP_CONNECTION_COUNT) >= 1,
                    e.toString());
        }
        assertTrue(alloc.stream().anyMatch(e -> e.getLong(EventFields.PACKETS) > 100 && e.getLong(EventFields.BYTES_PER_PACKET) >= 0),
                alloc.toString());
        System.out.printf(java.util.Locale.ROOT, "netty jfr: %d server CongestionState, smoothed RTT %.1f-%.1f ms, largest"
                        + " window %d B; close summaries' bytes sent at least %d; at most %d datagrams in a SendPathAllocation"
                        + " window%n", server.size(), srtts.getMin() / 1e6, srtts.getMax() / 1e6, maxCwnd, minSent,
                alloc.stream().mapToLong(e -> e.getLong(EventFields.PACKETS)).max().orElse(0));
        System.out.println("netty jfr: " + assigned.size() + " AlgorithmAssigned, " + states.size()
                + " CongestionState, " + alloc.size() + " event-loop SendPathAllocation (bytes/packet "
                + alloc.stream().map(e -> Long.toString(e.getLong(EventFields.BYTES_PER_PACKET))).collect(Collectors.joining(","))
                + "), SendLoopSpin " + report.count(EventNames.SEND_LOOP_SPIN) + ", AckOnlySendLoop "
                + report.count(EventNames.ACK_ONLY_SEND_LOOP));
    }

    /**
     * Pacing seen from outside, on a 10 Mbit/s, 40 ms link with a 1-BDP buffer and quiche's BBR: the
     * socket's densest millisecond is smaller paced; the bottleneck's queue stands lower or overflows less
     * (odds of both beside them, in {@code PacingEvidence.checkPaced}). The queue depends on quiche's own bandwidth estimate too, and once in CI (2 cores)
     * a paced run kept it at 30.9 ms against 38.3 unpaced, with 41 / 33 drops, while 6 pairs on this machine
     * (3 idle, 3 beside two busy loops) showed 0.4-4.3 ms paced against 37.0-38.3 ms unpaced. So a
     * pair whose queue or socket does not agree is measured again, at most twice, counted and printed with quiche's
     * bandwidth estimates; unpaced sending keeps the queue at the buffer's size every time, so a pacer that
     * does nothing still fails all three.
     */
    @Test
    @Timeout(300)
    void pacingFollowsQuicheSendTimes() throws Exception {
        String link = "link=10000000,20,1,0";
        Path recOff = NettyApp.WORK.resolve("pacing-off.jfr").toAbsolutePath();
        Path recOn = NettyApp.WORK.resolve("pacing-on.jfr").toAbsolutePath();
        List<String> disagreements = new java.util.ArrayList<>();
        for (int attempt = 1; ; attempt++) {
            Files.deleteIfExists(recOff);
            Files.deleteIfExists(recOn);
            NettyApp.Run off = NettyApp.run("pacing-off", NettyApp.Version.CURRENT,
                    "netty.cc=bbr;netty.pacing=off;log=debug;netty.stats.period=250ms;jfr=" + recOff, 150,
                    "bytes=3145728", link);
            NettyApp.Run on = NettyApp.run("pacing-on", NettyApp.Version.CURRENT,
                    "netty.cc=bbr;netty.pacing=on;log=debug;netty.stats.period=250ms;jfr=" + recOn, 150,
                    "bytes=3145728", link);
            assertIntact(off, 1);
            assertIntact(on, 1);
            List<String> pacers = on.lines("netty pacer [");
            String server = pacers.stream().filter(l -> !l.contains("deferred=0")).findFirst()
                    .orElseThrow(() -> new AssertionError(on.tail()));
            // no busy send loop on a healthy run, either way (the spin detector's recording)
            RecordingReport reportOn = RecordingReport.read(recOn);
            assertEquals(0, reportOn.count(EventNames.SEND_LOOP_SPIN), "SendLoopSpin, pacing on");
            assertEquals(0, RecordingReport.read(recOff).count(EventNames.SEND_LOOP_SPIN), "SendLoopSpin, pacing off");
            long cpuOn = on.number("CPU cpuMs=", "cpuMs");
            long cpuOff = off.number("CPU cpuMs=", "cpuMs");
            System.out.println("pacing off: " + off.lines("WRITES") + " " + off.lines("EMULATOR") + " "
                    + off.lines("RESULT") + " cpuMs=" + cpuOff);
            System.out.println("pacing on:  " + on.lines("WRITES") + " " + on.lines("EMULATOR") + " "
                    + on.lines("RESULT") + " cpuMs=" + cpuOn + " " + server);
            // evidence from outside the pacer: spacing at the socket (asserted inside) and the emulator's queue
            String disagreement = PacingEvidence.checkPaced(on, off);
            if (disagreement == null) {
                System.out.println("pacing evidence: the socket and the queue agreed on attempt " + attempt + " of 3; pairs measured"
                        + " again: " + (attempt - 1));
                return;
            }
            // quiche's own bandwidth estimate in the paced run: pacing follows it, so an estimate above the
            // link's 10 Mbit/s keeps a queue standing, paced or not
            Set<String> serverIds = reportOn.events(EventNames.ALGORITHM_ASSIGNED).stream()
                    .filter(e -> "server".equals(e.getString(EventFields.ROLE))).map(e -> e.getString(EventFields.CONNECTION_ID))
                    .collect(Collectors.toSet());
            String estimates = reportOn.events(EventNames.CONGESTION_STATE).stream()
                    .filter(e -> serverIds.contains(e.getString(EventFields.CONNECTION_ID)))
                    .map(e -> String.format(java.util.Locale.ROOT, "%.1f", e.getLong(EventFields.BANDWIDTH_ESTIMATE) * 8e-6))
                    .collect(Collectors.joining(" "));
            disagreements.add("attempt " + attempt + ": " + disagreement + "\nquiche's bandwidth estimates, paced run,"
                    + " server, every 250 ms, Mbit/s: " + estimates);
            System.out.println("pacing evidence: " + disagreements.get(disagreements.size() - 1));
            if (attempt == 3) {
                throw new AssertionError(String.join("\n", disagreements));
            }
        }
    }
}
