package dev.ccagent.it.netty;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The agent on the Netty 4.2.x versions around its BBR guard and on the newest served one.
 * Netty passes quiche the BBR id of quiche's C header: 4.2.10 bundles quiche 0.24.8 (id 2, which that
 * quiche's algorithm enum lacks: it panics), 4.2.11 is the first with quiche 0.25.0 (id 4,
 * bbr2_gcongestion), 4.2.18 bundles quiche 0.29.3 (id 4). The refusing side (4.2.10) is
 * {@code NettyQuicAgentTest.guardRefusesBbrOnQuiche0248}; this class has the accepting side.
 * Which algorithm runs is shown by quiche's own window, sampled by the application (see
 * {@link QuicheEvidence}), starting from an application algorithm other than the forced one.
 */
class NettyVersionsTest {

    private static final String LINK = "link=20000000,20,1,0.01";

    private static void assertIntact(NettyApp.Run r) {
        assertEquals(0, r.exit, r.tail());
        assertTrue(r.out.contains("DONE ok=true"), r.tail());
        assertEquals(1, r.lines("crcOk=true").size(), r.tail());
        assertTrue(r.lines("panicked").isEmpty() && r.lines("fatal runtime error").isEmpty(), r.tail());
    }

    /** The server's one connection: its line names {@code connection}, and quiche's window passes {@code window}. */
    private static void assertOneConnection(NettyApp.Run r, String connection, Consumer<QuicheEvidence.Window> window) {
        List<String> conns = r.lines("netty connection side=server");
        assertEquals(1, conns.size(), r.tail());
        assertTrue(conns.get(0).contains(connection), conns.get(0));
        Map<String, QuicheEvidence.Window> w = QuicheEvidence.windows(r);
        assertEquals(1, w.size(), r.tail());
        w.values().forEach(window);
    }

    /** 4.2.11, the first 4.2.x whose quiche takes id 4: the guard lets BBR through and quiche runs it. */
    @Test
    @Timeout(200)
    void bbrRunsFromNetty4211() throws Exception {
        NettyApp.Run r = NettyApp.run("bbr-4.2.11", NettyApp.Version.BBR4_FIRST,
                "netty.cc=bbr;log=debug;netty.stats.period=100ms", 150, "bytes=1572864", "app-cc=reno",
                "probe=10", LINK);
        assertIntact(r);
        assertFalse(r.lines("Netty QUIC 4.2.x (io.netty.handler.codec.quic) version "
                + System.getProperty("netty.version.bbr4-first")).isEmpty(), r.tail());
        assertFalse(r.lines("bundles quiche 0.25.0 (Netty's ids reno/cubic/bbr = 0/1/4); reno (0), cubic (1) and bbr (4, "
                + "bbr2_gcongestion) available").isEmpty(), r.tail());
        assertTrue(r.lines("refusing bbr").isEmpty(), r.tail());
        // quiche's own behaviour: the application's reno would halve the window; bbr's send times run ahead
        assertOneConnection(r, "algorithm=bbr quiche-id=4 quiche=0.25.0", QuicheEvidence.Window::assertNotReno);
        long ahead = r.number("netty path side=server", "aheadSendTimes");
        long seen = r.number("netty path side=server", "sendTimes");
        // a hundredth, as NettyQuicAgentTest.forcedAlgorithmsRunInQuiche's bound (why there)
        assertTrue(seen > 500 && ahead > seen / 100, "bbr: " + ahead + " of " + seen + " send times ahead");
    }

    /** 4.2.18 (quiche 0.29.3), the newest with a served linux-x86_64 native jar: forced reno over cubic. */
    @Test
    @Timeout(200)
    void forcedRenoOnNetty4218() throws Exception {
        NettyApp.Run r = NettyApp.run("reno-4.2.18", NettyApp.Version.LATEST,
                "netty.cc=reno;log=debug;netty.stats.period=off", 150, "bytes=1048576", "app-cc=cubic", "probe=10", LINK);
        assertIntact(r);
        assertFalse(r.lines("bundles quiche 0.29.3 (Netty's ids reno/cubic/bbr = 0/1/4); reno (0), cubic (1) and bbr (4, "
                + "bbr2_gcongestion) available").isEmpty(), r.tail());
        assertOneConnection(r, "algorithm=reno quiche-id=0 quiche=0.29.3", QuicheEvidence.Window::assertReno);
    }
}
