package dev.ccagent.it.netty;

import dev.ccagent.agent.config.AgentArgs;
import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.select.AlgorithmSelector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.HexFormat;
import java.util.List;
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

    private static void assertIntact(NettyFork.Run r, int transfers) {
        assertEquals(0, r.exit, r.tail());
        assertTrue(r.out.contains("DONE ok=true"), r.tail());
        assertEquals(transfers, r.lines("crcOk=true").size(), r.tail());
        assertTrue(r.lines("crcOk=false").isEmpty(), r.tail());
    }

    private static List<String> serverConnections(NettyFork.Run r) {
        return r.lines("netty connection side=server");
    }

    @Test
    @Timeout(300)
    void forcedAlgorithmsRunInQuiche() throws Exception {
        String[][] cases = {{"reno", "0"}, {"cubic", "1"}, {"bbr", "4"}};
        for (String[] c : cases) {
            NettyFork.Run r = NettyFork.run("forced-" + c[0], NettyFork.Version.CURRENT,
                    "netty.cc=" + c[0] + ";log=debug;netty.stats.period=100ms", 120,
                    "bytes=4194304", "app-cc=cubic");
            assertIntact(r, 1);
            List<String> conns = serverConnections(r);
            assertEquals(1, conns.size(), r.tail());
            assertTrue(conns.get(0).contains("arm=default:" + c[0] + " algorithm=" + c[0] + " quiche-id=" + c[1]),
                    conns.get(0));
            // proof from quiche itself: only bbr (gcongestion, with its pacer) hands out future send
            // times; reno and cubic always say "now"
            long ahead = r.number("netty path side=server", "aheadSendTimes");
            long seen = r.number("netty path side=server", "sendTimes");
            assertTrue(seen > 500, r.tail());
            if (c[0].equals("bbr")) {
                assertTrue(ahead > seen / 10, "bbr: " + ahead + " of " + seen + " send times ahead");
            } else {
                assertEquals(0, ahead, c[0] + ": no send time may be ahead");
            }
        }
    }

    @Test
    @Timeout(300)
    void canarySplitFollowsTheSelector() throws Exception {
        String args = "netty.canary=bbr:30%;log=debug;netty.stats.period=off";
        int n = 24;
        NettyFork.Run r = NettyFork.run("canary", NettyFork.Version.CURRENT, args, 200,
                "connections=" + n, "bytes=131072", "app-cc=cubic");
        assertIntact(r, n);
        AgentConfig config = AgentArgs.parse(args).config();
        List<String> conns = serverConnections(r);
        assertEquals(n, conns.size(), r.tail());
        int bbr = 0;
        for (String line : conns) {
            Matcher m = CONNECTION.matcher(line);
            assertTrue(m.find(), line);
            byte[] id = HexFormat.of().parseHex(m.group(1));
            AgentConfig.Arm predicted = AlgorithmSelector.select(config.netty().canaryArms(), config.netty().defaultArm(),
                    AlgorithmSelector.hash(id));
            assertEquals(predicted.label() + ":" + predicted.algorithm(), m.group(2) + ":" + m.group(3), line);
            String expected = predicted.isStock() ? "app" : predicted.algorithm();
            assertEquals(expected, m.group(4), line);
            if (m.group(4).equals("bbr")) {
                bbr++;
                assertEquals("4", m.group(5), line);
            }
        }
        // 30 % of 24 is 7.2; random ids: anything from 1 to 16 is within ~4 sigma
        assertTrue(bbr >= 1 && bbr <= 16, "bbr connections: " + bbr + " of " + n);
    }

    @Test
    @Timeout(200)
    void incubatorPackage() throws Exception {
        NettyFork.Run r = NettyFork.run("incubator", NettyFork.Version.INCUBATOR,
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
        NettyFork.Run r = NettyFork.run("guard-4.2.10", NettyFork.Version.OLD,
                "netty.cc=bbr;log=debug;netty.stats.period=off", 150, "bytes=2097152", "app-cc=cubic");
        assertIntact(r, 1);
        assertFalse(r.lines("bundles quiche 0.24.8 (Netty's ids reno/cubic/bbr = 0/1/2)").isEmpty(), r.tail());
        assertFalse(r.lines("WARN netty: refusing bbr on io.netty.handler.codec.quic: quiche 0.24.8").isEmpty(),
                r.tail());
        List<String> conns = serverConnections(r);
        assertEquals(1, conns.size(), r.tail());
        assertTrue(conns.get(0).contains("algorithm=app quiche-id=app quiche=0.24.8 refused:"), conns.get(0));
        assertTrue(r.lines("panicked").isEmpty() && r.lines("fatal runtime error").isEmpty(), r.tail());
    }

    @Test
    @Timeout(300)
    void pacingFollowsQuicheSendTimes() throws Exception {
        String link = "link=10000000,20,1,0";
        NettyFork.Run off = NettyFork.run("pacing-off", NettyFork.Version.CURRENT,
                "netty.cc=bbr;netty.pacing=off;log=debug;netty.stats.period=250ms", 150, "bytes=3145728", link);
        NettyFork.Run on = NettyFork.run("pacing-on", NettyFork.Version.CURRENT,
                "netty.cc=bbr;netty.pacing=on;log=debug;netty.stats.period=250ms", 150, "bytes=3145728", link);
        assertIntact(off, 1);
        assertIntact(on, 1);
        List<String> pacers = on.lines("netty pacer [");
        String server = pacers.stream().filter(l -> !l.contains("deferred=0")).findFirst()
                .orElseThrow(() -> new AssertionError(on.tail()));
        long datagrams = number(server, "datagrams");
        long deferred = number(server, "deferred");
        long wakeups = number(server, "wakeups");
        long onTime = number(server, "onTime");
        // bbr's send times are mostly ahead: the pacer holds most datagrams...
        assertTrue(deferred > datagrams / 2, server);
        // ...releases them at their time (within 1 ms; generous under a loaded machine)...
        assertTrue(onTime >= deferred * 6 / 10, server);
        // ...from timer wake-ups, never more than one per datagram (no per-packet spinning)
        assertTrue(wakeups <= deferred, server);
        long cpuOn = on.number("CPU", "cpuMs");
        long cpuOff = off.number("CPU", "cpuMs");
        assertTrue(cpuOn <= 3 * cpuOff + 5000, "cpu on " + cpuOn + " ms vs off " + cpuOff + " ms");
        System.out.println("pacing off: " + off.lines("WRITES") + " " + off.lines("EMULATOR") + " " + off.lines("RESULT"));
        System.out.println("pacing on:  " + on.lines("WRITES") + " " + on.lines("EMULATOR") + " " + on.lines("RESULT")
                + " " + server);
    }

    private static long number(String line, String key) {
        Matcher m = Pattern.compile("\\b" + key + "=([0-9]+)").matcher(line);
        assertTrue(m.find(), key + " in " + line);
        return Long.parseLong(m.group(1));
    }
}
