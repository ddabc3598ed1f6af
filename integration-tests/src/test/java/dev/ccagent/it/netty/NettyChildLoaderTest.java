package dev.ccagent.it.netty;

import dev.ccagent.jfr.EventFields;
import dev.ccagent.jfr.EventNames;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Netty QUIC in a child class loader that the agent's loader cannot see (a web application's
 * child-first loader, {@code dev.ccagent.it.ChildLoaderMain}; the Spring Boot jar is
 * {@code NettyBootJarTest}'s): the agent defines its Netty helpers in that loader, so every feature
 * runs there as on a flat class path. From outside: the module's verdict names the loader and says
 * "applied" (not "the algorithm choice only"); the JDK's parser finds path stats
 * ({@code CongestionState}) and a {@code ConnectionSummary} of the served connection in the
 * recording; the pacer spaces the datagrams at the server's socket (the app's write recorder, paced
 * against unpaced on the same link); no agent warning. Without the helpers in Netty's loader the verdict
 * said "the algorithm choice only", the recording had neither event and the socket saw the same bursts
 * paced or not.
 */
class NettyChildLoaderTest {

    private static final String LINK = "link=10000000,20,1,0";

    /**
     * How far the close summary's bytes sent may sit from the emulator's count of the server's datagrams.
     * The two differ by a fixed offset: the emulator also counts the Retry that Netty's codec sends
     * (InsecureQuicTokenHandler) before quiche's connection exists, about 92 bytes, and about 320 more that
     * quiche's count leaves out, not traced further (quiche counts 1 packet more than the emulator's datagrams:
     * coalesced handshake packets). Measured on 2026-12-06, 8 runs: the summary 409-412 bytes below the
     * emulator every time, 1,974,508 and 2,013,549 below it (about 200 KB, the last 250 ms) in 2 of 2 runs
     * with the close sample taken out. The bound is 1,500: a missed tail of even one full datagram (about
     * 1,350 bytes) on top of the offset fails it, and the offset's spread (3 bytes) would have to grow
     * 300-fold to fail it by chance; no false failure is expected.
     */
    private static final long TOLERANCE = 1_500L;

    private static NettyApp.Run runInChild(String name, String agentArgs) throws Exception {
        String child = NettyApp.testAppsClassPath() + File.pathSeparator + NettyApp.jars(NettyApp.Version.LATEST);
        // the forked JVM's own class path: test-apps' classes only (for the launcher); Netty is on the child's alone
        return NettyApp.runMain(name, "dev.ccagent.it.ChildLoaderMain", System.getProperty("it.classes"), agentArgs,
                150, List.of("-Dchild.name=webapp", "-Dchild.classpath=" + child,
                        "-Dchild.main=dev.ccagent.it.netty.NettyBulkApp"), "bytes=2097152", LINK);
    }

    private static List<RecordedEvent> events(Path recording, String type) throws Exception {
        return RecordingFile.readAllEvents(recording).stream().filter(e -> e.getEventType().getName().equals(type))
                .collect(Collectors.toList());
    }

    @Test
    @Timeout(300)
    void everyFeatureRunsWhereTheAgentCannotSeeNetty() throws Exception {
        Path rec = NettyApp.WORK.resolve("child-loader.jfr").toAbsolutePath();
        Files.createDirectories(rec.getParent());
        // paced against unpaced on the same link, seen from outside the pacer (PacingEvidence.checkPaced: the
        // socket's densest millisecond smaller, the bottleneck's queue lower or overflowing less). A pair that
        // disagrees is measured again, at most twice, as in NettyQuicAgentTest: until 2026-12-04 the socket alone
        // was asserted once, and the clean clone of 83f1ae1 had a pair at 7 / 7 per millisecond (13 gate runs
        // before: paced 4-7, unpaced 10-18) while the queue stood at 3.0 ms paced against 38.6 ms unpaced (it
        // passed on its rerun). One such pair in 14 runs: three in a row, (1/14)^3 = 4e-4 if that rate held, and
        // the gate's pairs since (NettyQuicAgentTest's, the same link) put it nearer 1e-3 a pair: 1e-9. A pacer
        // that does nothing fails all three (the queue stands at the buffer's size unpaced).
        NettyApp.Run on = null;
        NettyApp.Run off = null;
        String disagreement = null;
        int attempt = 0;
        while (attempt < 3 && (attempt == 0 || disagreement != null)) {
            attempt++;
            Files.deleteIfExists(rec);
            on = runInChild("child-loader-paced",
                    "netty.cc=bbr;netty.pacing=on;detect=on;netty.stats.period=250ms;log=info;jfr=" + rec);
            off = runInChild("child-loader-unpaced", "netty.cc=bbr;netty.pacing=off;log=info");
            checkRun(on);
            checkRun(off);
            disagreement = PacingEvidence.checkPaced(on, off);
            System.out.println("[it] netty child loader: pacing pair " + attempt + (disagreement == null ? " agreed"
                    : " disagreed: " + disagreement));
        }
        assertTrue(disagreement == null, "paced at the socket and at the bottleneck, in one of 3 pairs: " + disagreement);
        recorded(rec, on);
    }

    /** The run completed intact, the module applied in the child loader with everything, and no agent warning. */
    private static void checkRun(NettyApp.Run r) {
        assertEquals(0, r.exit, r.tail());
        assertTrue(r.out.contains("DONE ok=true"), r.tail());
        assertEquals(1, r.lines("crcOk=true").size(), r.tail());
        List<String> verdicts = r.lines("Netty QUIC 4.2.x (io.netty.handler.codec.quic)");
        assertTrue(verdicts.stream().anyMatch(l -> l.contains(" in webapp@") && l.endsWith(": applied")),
                "the verdict for the child loader: " + verdicts + "\n" + r.tail());
        assertTrue(r.lines("algorithm choice only").isEmpty(), r.tail());
        assertTrue(r.lines("[ccagent] WARN").isEmpty() && r.lines("[ccagent] ERROR").isEmpty(), r.tail());
    }

    /**
     * Path stats and the summary of the served connection, as the JDK's parser reads them from the paced
     * run, against the emulator's count of what the server's socket sent.
     */
    private static void recorded(Path rec, NettyApp.Run run) throws Exception {
        List<RecordedEvent> assigned = events(rec, EventNames.ALGORITHM_ASSIGNED);
        String server = assigned.stream().filter(e -> "server".equals(e.getString(EventFields.ROLE)))
                .map(e -> e.getString(EventFields.CONNECTION_ID)).findFirst()
                .orElseThrow(() -> new AssertionError("no AlgorithmAssigned of the server connection: " + assigned));
        long states = events(rec, EventNames.CONGESTION_STATE).stream()
                .filter(e -> server.equals(e.getString(EventFields.CONNECTION_ID))).count();
        assertTrue(states >= 2, "CongestionState events of the server connection: " + states);
        List<RecordedEvent> summaries = events(rec, EventNames.CONNECTION_SUMMARY).stream()
                .filter(e -> server.equals(e.getString(EventFields.CONNECTION_ID))).collect(Collectors.toList());
        assertEquals(1, summaries.size(), "one ConnectionSummary of the server connection");
        // The close summary holds quiche's own count, read just before Netty frees quiche's connection: every
        // byte the server's socket sent, the close included. The emulator counts the same datagrams on their way
        // to the client (the server's only peer: the run's one connection). Until 2026-12-06 the summary held
        // the last periodic sample (netty.stats.period, 250 ms here) and missed what was sent after it: 1.9x MB
        // of ~2.16 MB in 2 of 3 runs of a clean clone on 2026-12-04 (docs/testing.md).
        long sent = summaries.get(0).getLong(EventFields.BYTES_SENT);
        long onWire = run.number("EMULATOR toClient", "bytesIn");
        long packets = summaries.get(0).getLong(EventFields.PACKETS_SENT);
        long packetsOnWire = run.number("EMULATOR toClient", "packetsIn");
        System.out.println("[it] netty child loader: the close summary counts " + sent + " bytes in " + packets
                + " packets sent; the emulator saw " + onWire + " in " + packetsOnWire + " from the server");
        assertTrue(sent >= 2_097_152L, "the summary counts the 2 MiB the server sent: " + summaries.get(0));
        assertTrue(Math.abs(sent - onWire) <= TOLERANCE,
                "the summary's bytes sent (" + sent + ") are what the emulator saw from the server (" + onWire + ")");
    }
}
