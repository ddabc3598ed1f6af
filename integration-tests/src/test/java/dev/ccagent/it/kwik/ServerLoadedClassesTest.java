package dev.ccagent.it.kwik;

import dev.ccagent.it.AgentCli;
import dev.ccagent.it.ForkedJvm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a server JVM loads of ccagent, from the JVM's own class-loading log ({@code -Xlog:class+load}):
 * a kwik server with the agent at start (an algorithm, a canary, a recording, detection) serving a
 * download and answering the operator's {@code status}; the agent's core, the kwik package, cc-impl
 * and the event classes are loaded, and nothing of the report, the CLI, picocli, the simulator, the
 * link model or JFreeChart (docs/architecture.md, "What runs where"), nor Byte Buddy's Nexus.
 */
class ServerLoadedClassesTest {

    /** Packages a server JVM must never load. */
    static final List<String> NEVER = List.of("dev.ccagent.report.", "dev.ccagent.agent.cli.", "dev.ccagent.shaded.picocli.",
            "picocli.", "dev.ccagent.sim.", "dev.ccagent.link.", "org.jfree.", "dev.ccagent.shaded.org.jfree.");

    /** Byte Buddy's Nexus and the class injectors that would define it in the system class loader. */
    static final Set<String> NEXUS = Set.of("dev.ccagent.shaded.net.bytebuddy.dynamic.Nexus",
            "dev.ccagent.shaded.net.bytebuddy.dynamic.loading.ClassInjector$UsingReflection",
            "dev.ccagent.shaded.net.bytebuddy.dynamic.loading.ClassInjector$UsingUnsafe");

    private static final Pattern LOADED = Pattern.compile("\\[class,load\\s*\\] (\\S+) source:");

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void aServerLoadsTheAgentAndNothingOfTheReportCliOrSimulator() throws Exception {
        Path dir = KwikIt.workDir("server-loaded-classes");
        Path log = dir.resolve("class-load.log");
        String agentArgs = "cc=bbr1;canary=cubic:50%;jfr=" + dir.resolve("server.jfr") + ";detect=on;fix.kwik-stream-stall=on;log=info";
        ForkedJvm.Builder b = ForkedJvm.builder("server", KwikBulkServer.class.getName())
                .classPath(KwikIt.appClassPath())
                .dir(dir)
                .jvmArgs("-Xmx512m", "-XX:+UseSerialGC", "-Xlog:class+load=info:file=" + log)
                .args("--keystore", KwikIt.keyStore().toString())
                .javaagent(KwikIt.agentJar(), agentArgs);
        try (KwikIt.Server server = KwikIt.awaitPort(b.start())) {
            KwikIt.ClientRun run = KwikIt.runClient(dir, "client", null, Duration.ofSeconds(120),
                    "--port", Integer.toString(server.port), "--mode", "down", "--bytes", "2000000", "--seed", "1");
            assertTrue(run.allOk(1), run.describe + server.jvm.describe());
            AgentCli.Result status = CliCommandsTest.cli(dir, "status", "status", Long.toString(server.jvm.pid()));
            assertEquals(0, status.exit(), status.all());
            assertTrue(status.out().contains("active:        true"), status.all());
        }
        Set<String> ours = new TreeSet<>();
        for (String line : Files.readAllLines(log)) {
            Matcher m = LOADED.matcher(line);
            if (m.find() && (m.group(1).startsWith("dev.ccagent.") || m.group(1).startsWith("org.jfree.")
                    || m.group(1).startsWith("picocli."))) {
                ours.add(m.group(1));
            }
        }
        // the log is the JVM's and it saw the agent work: its kwik adapter, our BBR, our events
        for (String expected : List.of("dev.ccagent.agent.CcAgent", "dev.ccagent.agent.kwik.KwikControllerAdapter",
                "dev.ccagent.cc.bbr.Bbr1", "dev.ccagent.jfr.ConnectionSummary", "dev.ccagent.agent.control.Control")) {
            assertTrue(ours.contains(expected), expected + " loaded; loaded: " + ours);
        }
        Set<String> forbidden = new TreeSet<>();
        for (String c : ours) {
            for (String p : NEVER) {
                if (c.startsWith(p)) {
                    forbidden.add(c);
                }
            }
        }
        assertEquals(Set.of(), forbidden, "classes a server JVM must never load");
        // Byte Buddy's Nexus is skipped (Installer.skipNexus): neither it nor the injectors that define it are loaded,
        // where they were 194 of a hello-world main's 2,811 classes with the agent (2026-12-07)
        Set<String> nexus = new TreeSet<>();
        for (String c : ours) {
            if (NEXUS.contains(c)) {
                nexus.add(c);
            }
        }
        assertEquals(Set.of(), nexus, "Byte Buddy's Nexus and its class injectors, which the agent never uses");
        System.out.printf("[it] a kwik server with the agent loaded %d ccagent classes, none of the report, CLI,"
                + " simulator or JFreeChart, nor Byte Buddy's Nexus%n", ours.size());
    }
}
