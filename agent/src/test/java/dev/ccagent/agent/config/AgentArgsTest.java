package dev.ccagent.agent.config;

import dev.ccagent.agent.log.AgentLog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AgentArgsTest {

    @Test
    void fullGrammar() {
        AgentArgs.Result r = AgentArgs.parse(
                "cc=newreno; canary=cubic:10%,reno-hbdp:5.5%; opt.newreno.quantum-ratio=0.002; log=debug; "
                        + "jfr=rec.jfr; jfr.max-size=64MiB; jfr.max-age=10min; fix.kwik-stream-stall=on; fix.kwik-loss-timer=on; targets=kwik;");
        assertTrue(r.ok(), r.problems().toString());
        AgentConfig c = r.config();
        assertEquals("newreno", c.defaultArm().algorithm());
        assertEquals(84.5, c.defaultArm().percent(), 1e-9);
        assertEquals(0.002, c.defaultArm().options().quantumRatio());
        assertEquals(2, c.canaryArms().size());
        assertEquals("cubic", c.canaryArms().get(0).algorithm());
        assertEquals(5.5, c.canaryArms().get(1).percent(), 1e-9);
        assertEquals(AgentLog.Level.DEBUG, c.logLevel());
        assertEquals(Path.of("rec.jfr"), c.jfrFile());
        assertEquals(64L << 20, c.jfrMaxSizeBytes());
        assertEquals(600_000_000_000L, c.jfrMaxAgeNanos());
        assertTrue(c.fixKwikStreamStall());
        assertTrue(c.fixKwikLossTimer());
        assertTrue(c.targets("kwik"));
        assertFalse(c.targets("netty"));
        assertTrue(c.injectsAnything());
        assertEquals(AgentConfig.DEFAULT_STATE_CONNECTIONS, c.stateConnections(), "not given: the default");
        assertEquals(1000, AgentArgs.parse("jfr.state-connections=1000").config().stateConnections());
    }

    @Test
    void emptyArgumentsMeanStockEverywhere() {
        AgentArgs.Result r = AgentArgs.parse((String) null);
        assertTrue(r.ok());
        assertTrue(r.config().defaultArm().isStock());
        assertFalse(r.config().injectsAnything());
        assertTrue(AgentArgs.parse("  ;; ").ok());
    }

    @Test
    void theStreamStallFixIsOnUnlessTurnedOffAndSaysWhetherByDefault() {
        AgentConfig byDefault = AgentArgs.parse("cc=bbr1").config();
        assertTrue(byDefault.fixKwikStreamStall());
        assertTrue(byDefault.fixKwikStreamStallByDefault());
        AgentConfig named = AgentArgs.parse("cc=bbr1;fix.kwik-stream-stall=on").config();
        assertTrue(named.fixKwikStreamStall());
        assertFalse(named.fixKwikStreamStallByDefault());
        AgentConfig off = AgentArgs.parse("cc=bbr1;fix.kwik-stream-stall=off").config();
        assertFalse(off.fixKwikStreamStall());
        assertFalse(off.fixKwikStreamStallByDefault());
        assertTrue(AgentArgs.parse((String) null).config().fixKwikStreamStall(), "no arguments: on too");
    }

    @Test
    void canaryAgainstStock() {
        AgentConfig c = AgentArgs.parse("canary=cubic:30%").config();
        assertTrue(c.defaultArm().isStock());
        assertEquals(70, c.defaultArm().percent(), 1e-9);
        assertTrue(c.injectsAnything());
    }

    @Test
    void everyProblemIsOneLineNamingIt() {
        String[][] cases = {
            {"frobnicate=1", "unknown key 'frobnicate'"},
            {"cc=bbr9", "cc=bbr9"},
            {"canary=cubic", "canary=cubic: expected ALGO:PCT%"},
            {"canary=cubic:80%,newreno:30%", "more than 100%"},
            {"canary=cubic:0%", "must be in (0, 100]"},
            {"canary=cubic:10%,cubic:10%", "appears twice"},
            {"opt.newreno.quantum-ratio=2", "quantum-ratio"},
            {"opt.newreno.speed=9", "unknown option speed"},
            {"opt.vegas.beta=0.5", "opt.vegas.beta"},
            {"opt.newreno=1", "expected opt.ALGO.KEY"},
            {"config=/no/such/file.properties", "no such file"},
            {"cc", "is not KEY=VALUE"},
            {"cc=newreno;cc=cubic", "given twice"},
            {"log=loud", "log=loud"},
            {"jfr.max-size=10KiB", "at least 1MiB"},
            {"jfr.max-age=soon", "jfr.max-age=soon"},
            {"fix.kwik-stream-stall=maybe", "expected on|off"},
            {"fix.kwik-loss-timer=maybe", "expected on|off"},
            {"targets=kwik,mvfst", "unknown target 'mvfst'"},
            {"jfr=", "empty path"},
            {"jfr.state-connections=0", "jfr.state-connections=0: expected 1 to 1000000 connections"},
            {"jfr.state-connections=many", "'many' is not a whole number of connections"},
        };
        for (String[] c : cases) {
            AgentArgs.Result r = AgentArgs.parse(c[0]);
            assertFalse(r.ok(), c[0]);
            assertNull(r.config(), c[0]);
            assertEquals(1, r.problems().size(), c[0] + " -> " + r.problems());
            String line = r.problems().get(0);
            assertTrue(line.contains(c[1]), c[0] + " -> " + line);
            assertFalse(line.contains("\n"), line);
        }
    }

    @Test
    void severalProblemsAreAllReported() {
        AgentArgs.Result r = AgentArgs.parse("cc=bbr9;log=loud;foo=bar");
        assertEquals(3, r.problems().size(), r.problems().toString());
    }

    @Test
    void configFileWithOverrides(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("cc.properties");
        Files.write(file, List.of("# long config", "cc=cubic", "canary=newreno:25%", "opt.cubic.beta=0.8",
                "log=warn"));
        AgentArgs.Result r = AgentArgs.parse("config=" + file + ";log=error");
        assertTrue(r.ok(), r.problems().toString());
        assertEquals("cubic", r.config().defaultArm().algorithm());
        assertEquals(0.8, r.config().defaultArm().options().getDouble("beta"));
        assertEquals(AgentLog.Level.ERROR, r.config().logLevel(), "arguments beside the file override it");
        assertEquals(25, r.config().canaryArms().get(0).percent(), 1e-9);

        Path bad = dir.resolve("bad.properties");
        Files.write(bad, List.of("cc=nope"));
        AgentArgs.Result rb = AgentArgs.parse("config=" + bad);
        assertFalse(rb.ok());
        assertTrue(rb.problems().get(0).contains("cc=nope"), rb.problems().toString());
    }
}
