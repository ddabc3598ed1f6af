package dev.ccagent.it.netty;

import dev.ccagent.it.ForkedJvm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code ccagent attach PID netty.cc=bbr} (the operator CLI, its own JVM) on a bare Netty QUIC server
 * whose codecs, and so their native quiche configs, were built before the agent: the connections made
 * after the attach run quiche's BBR — quiche's own window as the application samples it never halves,
 * although the application configured reno — and {@code status} and the recording (the JDK's parser)
 * say so. Where the configs' settings cannot be read (a test switch hides quiche's layout), the
 * connections keep the application's reno (quiche halves), and attach and status say that instead.
 */
class NettyLateAttachTest {

    private static final String LINK = "link=20000000,20,1,0.01";
    private static final int CONNECTIONS = 2;

    /** One CLI run: exit status and output. */
    private record Cli(int exit, String out) {
    }

    private static Cli cli(String name, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"), "-jar",
                Path.of(System.getProperty("ccagent.jar")).toAbsolutePath().normalize().toString()));
        cmd.addAll(List.of(args));
        Path out = NettyApp.WORK.resolve(name + ".cli.out").toAbsolutePath();
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        try {
            assertTrue(p.waitFor(120, TimeUnit.SECONDS), "ccagent " + String.join(" ", args) + " did not finish");
            return new Cli(p.exitValue(), Files.readString(out));
        } finally {
            p.destroyForcibly();
        }
    }

    /** The server started bare, attached after its codecs exist, the transfers, status, then the exit. */
    private static final class Outcome {
        Cli attach;
        Cli status;
        NettyApp.Run run;
        Map<String, QuicheEvidence.Assignment> assigned;
    }

    private static Outcome lateAttach(String name, String agentArgs, List<String> jvmArgs) throws Exception {
        Files.createDirectories(NettyApp.WORK);
        Path rec = NettyApp.WORK.resolve(name + ".jfr").toAbsolutePath();
        Path go = NettyApp.WORK.resolve(name + ".go").toAbsolutePath();
        Path done = NettyApp.WORK.resolve(name + ".done").toAbsolutePath();
        Files.deleteIfExists(rec);
        Files.deleteIfExists(go);
        Files.deleteIfExists(done);
        String args = agentArgs + ";jfr=" + rec;
        Outcome o = new Outcome();
        List<String> jvm = new ArrayList<>(List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:+EnableDynamicAgentLoading"));
        jvm.addAll(jvmArgs);
        try (ForkedJvm server = ForkedJvm.builder(name, "dev.ccagent.it.netty.NettyBulkApp")
                .dir(NettyApp.WORK)
                .jvmArgs(jvm.toArray(new String[0]))
                .classPath(NettyApp.appClasses(NettyApp.Version.CURRENT) + File.pathSeparator
                        + NettyApp.jars(NettyApp.Version.CURRENT))
                .args("keystore=" + NettyApp.keystore(), "connections=" + CONNECTIONS, "bytes=1572864", "app-cc=reno",
                        "probe=10", LINK, "start-after=" + go, "exit-after=" + done)
                .start()) {
            server.awaitLine(Pattern.compile("LISTENING"), Duration.ofSeconds(90));
            String pid = Long.toString(server.pid());
            o.attach = cli(name + "-attach", "attach", pid, args);
            assertEquals(0, o.attach.exit(), o.attach.out() + server.describe());
            Files.createFile(go);
            server.awaitLine(Pattern.compile("TRANSFERS DONE"), Duration.ofSeconds(120));
            o.status = cli(name + "-status", "status", pid);
            Files.createFile(done);
            int exit = server.waitFor(Duration.ofSeconds(60));
            o.run = new NettyApp.Run(exit, server.stdout(), server.stderr());
        }
        assertEquals(0, o.run.exit, o.run.tail());
        assertTrue(o.run.out.contains("DONE ok=true"), o.run.tail());
        assertEquals(CONNECTIONS, o.run.lines("crcOk=true").size(), o.run.tail());
        assertEquals(0, o.status.exit(), o.status.out());
        o.assigned = QuicheEvidence.serverAssignments(rec, agentArgs);
        assertEquals(CONNECTIONS, o.assigned.size(), o.assigned + o.run.tail());
        return o;
    }

    @Test
    @Timeout(240)
    void connectionsAfterTheAttachRunBbr() throws Exception {
        Outcome o = lateAttach("late-bbr", "netty.cc=bbr;log=debug;netty.stats.period=off", List.of());
        assertTrue(o.attach.out().contains("quiche configs built before the agent: their settings are read from quiche"
                + " at their first connection"), o.attach.out());
        // both sides' connections (client and server share the JVM) ran bbr, as asked: nothing counted otherwise
        assertTrue(o.status.out().contains("  netty default:bbr " + 2 * CONNECTIONS + "\n"), o.status.out());
        assertFalse(o.status.out().contains(" ran "), o.status.out());
        assertTrue(o.status.out().contains("config layout: algorithm at +"), o.status.out());
        assertTrue(o.status.out().contains("fallbacks:     0"), o.status.out());
        // the application's reno, read from quiche's memory of the config built before the agent
        assertFalse(o.run.lines("predates the agent; its settings, read from quiche: algorithm reno").isEmpty(),
                o.run.tail());
        for (QuicheEvidence.Assignment a : o.assigned.values()) {
            assertEquals("bbr2_gcongestion", a.algorithm, a.toString());
            assertEquals("forced", a.reason, a.toString());
        }
        // the bulk app samples each served connection's window by its order ("conn=N"): every one
        Map<String, QuicheEvidence.Window> windows = QuicheEvidence.windows(o.run);
        assertEquals(CONNECTIONS, windows.size(), o.run.tail());
        for (QuicheEvidence.Window w : windows.values()) {
            System.out.println("late attach bbr over the application's reno: " + w.line);
            w.assertNotReno(); // the application's reno would halve at 1% loss
        }
    }

    @Test
    @Timeout(240)
    void configsWhoseSettingsCannotBeReadKeepTheApplicationsAndSaySo() throws Exception {
        Outcome o = lateAttach("late-unreadable", "netty.cc=bbr;log=debug;netty.stats.period=off",
                List.of("-Dccagent.test.netty-config-layout=unreadable"));
        assertTrue(o.attach.out().contains("quiche configs built before the agent: their settings cannot be read"),
                o.attach.out());
        assertTrue(o.status.out().contains("  netty default:bbr ran the application's algorithm (settings of a config"
                + " older than the agent unreadable) " + 2 * CONNECTIONS + "\n"), o.status.out());
        assertFalse(o.status.out().contains("  netty default:bbr " + 2 * CONNECTIONS), o.status.out());
        for (QuicheEvidence.Assignment a : o.assigned.values()) {
            assertEquals("the application's algorithm", a.algorithm, a.toString());
            assertTrue(a.reason.startsWith("application's setting (refused: this native config was created before the"
                    + " agent was installed and its settings could not be read from quiche"), a.toString());
        }
        Map<String, QuicheEvidence.Window> windows = QuicheEvidence.windows(o.run);
        assertEquals(CONNECTIONS, windows.size(), o.run.tail());
        for (QuicheEvidence.Window w : windows.values()) {
            w.assertReno(); // untouched: quiche runs the application's reno
        }
    }
}
