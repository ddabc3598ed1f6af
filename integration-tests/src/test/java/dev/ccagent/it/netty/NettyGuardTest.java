package dev.ccagent.it.netty;

import dev.ccagent.it.Acceptance;
import dev.ccagent.jfr.EventFields;
import dev.ccagent.jfr.EventNames;
import dev.ccagent.agent.config.AgentArgs;
import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.report.RecordingReport;
import dev.ccagent.agent.select.AlgorithmSelector;
import jdk.jfr.consumer.RecordedEvent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code guard=on} on Netty QUIC: quiche's Reno as a 50% canary ({@code netty.canary=reno:50%}) against
 * quiche's BBR ({@code netty.cc=bbr}, paced by the agent) behind the link emulator with a deep buffer
 * (20 Mbit/s, 40 ms RTT, 4 BDP, no loss). Reno fills the buffer, BBR does not, so the canary's
 * per-connection RTT p95 (quiche's own RTT, sampled from its path stats) stands far above the
 * baseline's, and the guard must roll the canary back once both arms have {@code guard.min-connections}
 * closed server connections. Checked from outside the guard: the recording (JDK parser) has exactly one
 * {@code CanaryRolledBack}, for the Netty canary on RTT p95; every server connection assigned after it
 * is on the default arm although the selector predicts the canary for some of them, and those ran BBR
 * by quiche's own RTT (their p95 below 0.85 of the Reno connections' median); the baseline is
 * never rolled back; every transfer is intact (CRC). The client connections of the same JVM (the app
 * is both ends) are measured but not judged.
 */
@Acceptance("a guard rollback on Netty over 72 connections of 3 MB")
class NettyGuardTest {

    /**
     * The sequential test (docs/canary.md) needs at least 12 pairs with the canary worse by more than the
     * margin (its statistic 422 against 1/(0.01/4) = 400), and more when some are not: on a loaded machine
     * some BBR connections' RTT p95 reach 205-427 ms (a late sender), so about 26 of 30 pairs worse is what
     * it takes (e-value about 740), where the Mann-Whitney window decided on 8-10 per arm. Measured: with
     * 44 connections the split gave the canary 13, 11 of them worse than their partner: no decision.
     * 72 connections (36 ± 4.2 canary) leave some after the rollback for the redirect check.
     */
    static final int CONNECTIONS = 72;
    static final int MIN_CONNECTIONS = 8;

    @Test
    @Timeout(400)
    void renoFillingTheBufferIsRolledBack() throws Exception {
        Path rec = NettyApp.WORK.resolve("guard.jfr").toAbsolutePath();
        Files.deleteIfExists(rec);
        String args = "netty.cc=bbr;netty.canary=reno:50%;netty.stats.period=100ms;guard=on;guard.min-connections="
                + MIN_CONNECTIONS + ";guard.window=10min;log=debug";
        NettyApp.Run r = NettyApp.run("guard", NettyApp.Version.CURRENT, args + ";jfr=" + rec, 360,
                "connections=" + CONNECTIONS, "bytes=3000000", "link=20000000,20,4,0");
        assertEquals(0, r.exit, r.tail());
        assertTrue(r.out.contains("DONE ok=true"), r.tail());
        assertEquals(CONNECTIONS, r.lines("crcOk=true").size(), r.tail());

        RecordingReport report = RecordingReport.read(rec);
        List<RecordedEvent> rollbacks = report.events(EventNames.CANARY_ROLLED_BACK);
        String figures = figures(report);
        assertEquals(1, rollbacks.size(), "one rollback expected; per-connection figures:\n" + figures + r.tail());
        RecordedEvent rb = rollbacks.get(0);
        System.out.println("[it] netty guard: " + rb.getString(EventFields.EVIDENCE) + "\n" + figures);
        assertEquals("netty", rb.getString(EventFields.LIBRARY), rb.toString());
        assertEquals("canary", rb.getString(EventFields.CANARY_ARM), rb.toString());
        assertEquals("reno", rb.getString(EventFields.CANARY_ALGORITHM), rb.toString());
        assertEquals("bbr", rb.getString(EventFields.BASELINE_ALGORITHM), rb.toString());
        assertEquals("rtt p95 increase", rb.getString(EventFields.METRIC), rb.toString());
        assertTrue(rb.getLong(EventFields.CANARY_CONNECTIONS) >= MIN_CONNECTIONS
                && rb.getLong(EventFields.BASELINE_CONNECTIONS) >= MIN_CONNECTIONS, rb.toString());
        Instant rolledBackAt = rb.getStartTime();

        // quiche's own RTT (its path stats, in each server connection's close summary) by connection id
        java.util.Map<String, Long> rttP95 = new java.util.HashMap<>();
        for (RecordedEvent e : report.events(EventNames.CONNECTION_SUMMARY)) {
            if ("server".equals(e.getString(EventFields.ROLE)) && "close".equals(e.getString(EventFields.TRIGGER))) {
                rttP95.put(e.getString(EventFields.CONNECTION_ID), e.getLong(EventFields.RTT_P95));
            }
        }
        // the server connections assigned after the rollback: all on the default arm, some predicted canary;
        // those ran quiche's BBR, not Reno, by quiche's own RTT: below the Reno connections' median (not their
        // lowest: a clean-clone run's first, cold connection, Reno, stayed at 86 ms against the others' 197)
        AgentConfig config = AgentArgs.parse(args).config();
        int before = 0;
        int after = 0;
        int redirected = 0;
        List<Long> renoRtt = new ArrayList<>();
        List<Long> redirectedRtt = new ArrayList<>();
        for (RecordedEvent e : report.events(EventNames.ALGORITHM_ASSIGNED)) {
            if (!"server".equals(e.getString(EventFields.ROLE))) {
                continue;
            }
            AgentConfig.Arm predicted = AlgorithmSelector.select(config.netty().canaryArms(),
                    config.netty().defaultArm(), AlgorithmSelector.hash(HexFormat.of().parseHex(e.getString(EventFields.CONNECTION_ID))));
            if (e.getStartTime().isBefore(rolledBackAt)) {
                before++;
                assertEquals(predicted.label(), e.getString(EventFields.CANARY_ARM), "before the rollback: the selector's arm " + e);
                if (predicted.label().equals("canary")) {
                    Long p95 = rttP95.get(e.getString(EventFields.CONNECTION_ID));
                    if (p95 != null) {
                        renoRtt.add(p95);
                    }
                }
            } else {
                after++;
                assertEquals("default", e.getString(EventFields.CANARY_ARM), "after the rollback: " + e);
                if (predicted.label().equals("canary")) {
                    redirected++;
                    Long p95 = rttP95.get(e.getString(EventFields.CONNECTION_ID));
                    assertTrue(p95 != null, "no close summary for " + e);
                    redirectedRtt.add(p95);
                }
            }
        }
        renoRtt.sort(null);
        assertTrue(renoRtt.size() >= MIN_CONNECTIONS, "Reno connections with a close summary: " + renoRtt);
        long renoMedian = renoRtt.get(renoRtt.size() / 2);
        // measured: BBR 82-138 ms, Reno 197-206 ms (one cold first connection 86 ms); on a loaded machine a
        // single BBR connection's p95 can reach Reno's (a late sender: 180 ms in a clean-clone run beside a
        // build), so the redirected connections are judged as a group, by their median
        List<Long> sortedRedirected = new java.util.ArrayList<>(redirectedRtt);
        sortedRedirected.sort(null);
        if (!sortedRedirected.isEmpty()) {
            long redirectedMedian = sortedRedirected.get(sortedRedirected.size() / 2);
            assertTrue(redirectedMedian < renoMedian * 0.85, "the redirected connections' median RTT p95 "
                    + redirectedMedian / 1e6 + " ms is Reno-like (Reno's median before the rollback " + renoMedian / 1e6
                    + " ms):\n" + figures);
        }
        System.out.printf("[it] netty guard: %d server connections before the rollback, %d after (%d of them the "
                + "selector's canary, sent to the default arm; their RTT p95 %s ms, Reno's median %.1f ms)%n", before,
                after, redirected, redirectedRtt.stream().map(v -> String.format(java.util.Locale.ROOT, "%.1f", v / 1e6))
                        .collect(java.util.stream.Collectors.joining(", ")), renoMedian / 1e6);
        assertEquals(CONNECTIONS, before + after, "one AlgorithmAssigned per server connection");
        assertTrue(redirected > 0, "no connection after the rollback was the selector's canary: nothing shown ("
                + after + " after)");
    }

    /** Each server connection's close summary: arm, algorithm, RTT p95 and loss, for the failure message. */
    static String figures(RecordingReport report) {
        List<String> lines = new ArrayList<>();
        for (RecordedEvent e : report.events(EventNames.CONNECTION_SUMMARY)) {
            if ("server".equals(e.getString(EventFields.ROLE)) && "close".equals(e.getString(EventFields.TRIGGER))) {
                lines.add(String.format(java.util.Locale.ROOT, "  %s %s:%s rtt p50 %.1f p95 %.1f ms, lost %d of %d B",
                        e.getString(EventFields.CONNECTION_ID), e.getString(EventFields.CANARY_ARM), e.getString(EventFields.ALGORITHM),
                        e.getLong(EventFields.RTT_P50) / 1e6, e.getLong(EventFields.RTT_P95) / 1e6, e.getLong(EventFields.BYTES_LOST), e.getLong(EventFields.BYTES_SENT)));
            }
        }
        return String.join("\n", lines);
    }
}
