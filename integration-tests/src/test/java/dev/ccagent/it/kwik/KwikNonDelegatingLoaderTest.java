package dev.ccagent.it.kwik;

import dev.ccagent.it.ForkedJvm;
import dev.ccagent.jfr.EventFields;
import dev.ccagent.jfr.EventNames;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * kwik in a class loader that does not delegate to the application class loader (a child-first
 * {@code URLClassLoader} whose parent is the platform loader, {@code ChildLoaderMain} with
 * {@code child.parent=platform}; OSGi bundles and some web-application loaders are of this kind). The agent
 * lives in the application loader, so its hooks are not visible from there; the agent skips that loader
 * with the reason, at start and by late attach, and kwik keeps its own controller (docs/compatibility.md:
 * why the skip stays, rather than a bridge in the bootstrap loader).
 *
 * <p>From outside: the JDK's class histogram of the server ({@link HeapClasses}) shows what each download's
 * connection created, kwik's {@code NewRenoCongestionController} and none of our algorithms; the client checks
 * every byte; the JDK's recording parser finds no {@code AlgorithmAssigned} in the agent's recording, and the
 * loader's {@code ModuleVerdict} events, each "skipped" with the reason. The same
 * server in a child loader whose parent is the application loader gets bbr1 (the control: the same
 * histogram then shows a {@code Bbr1}, so the check can fail). kwik there is unpatched (the stream-stall fix
 * cannot reach that loader either): stalled attempts are retried and counted ({@link UnpatchedKwik}).
 */
class KwikNonDelegatingLoaderTest {

    private static final String LOADER = "webapp";
    private static final String AGENT_ARGS = "cc=bbr1;log=info";
    private static final String SKIPPED = ": skipped: the agent's classes are not visible from this class loader";

    /** A kwik server in a child-first loader named {@link #LOADER} whose parent is {@code parent}. */
    private static KwikIt.Server start(Path dir, String name, String parent, String agentArgs) throws Exception {
        return KwikIt.startServer(ForkedJvm.builder(name, "dev.ccagent.it.ChildLoaderMain")
                // the JVM's own class path: the launcher; kwik and the server are on the child's path alone
                .classPath(KwikIt.testAppsClasses())
                .jvmArgs("-Dchild.name=" + LOADER, "-Dchild.parent=" + parent,
                        "-Dchild.classpath=" + KwikIt.appClassPath(),
                        "-Dchild.main=" + KwikBulkServer.class.getName())
                .dir(dir), agentArgs);
    }

    /**
     * One 300 kB download over loopback with stall retries, and the classes the server created meanwhile (kwik
     * unpatched stalls a 1 MB download on loopback about twice, each stall costing 2 s).
     */
    private static HeapClasses.During<KwikIt.ClientRun> download(Path dir, String name, KwikIt.Server server, int seed)
            throws Exception {
        HeapClasses.During<KwikIt.ClientRun> d = HeapClasses.createdDuring(server.jvm.pid(), () ->
                KwikIt.runClient(dir, name, null, Duration.ofSeconds(120), UnpatchedKwik.overLoopback(
                        "--port", Integer.toString(server.port), "--mode", "down", "--bytes", "300000",
                        "--seed", Integer.toString(seed))));
        assertTrue(d.result().allOk(1), d.result().describe + server.jvm.describe());
        System.out.printf("[it] non-delegating loader: %s: algorithms created %s, kwik's NewReno created %d,"
                        + " %d stalled attempt(s) retried%n", name, d.algorithms(), d.count(HeapClasses.KWIK_NEW_RENO),
                d.result().retries());
        return d;
    }

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void skippedWithItsReasonAndKwikKeepsItsController() throws Exception {
        Path dir = KwikIt.workDir("non-delegating-loader");

        // the control: the same child-first loader under the application loader gets the agent's bbr1
        try (KwikIt.Server server = start(dir, "server-app-parent", "application", AGENT_ARGS)) {
            HeapClasses.During<KwikIt.ClientRun> d = download(dir, "client-app-parent", server, 1);
            assertEquals(Set.of("bbr1"), d.algorithms(), "the control got the agent's bbr1: " + d.created());
            assertTrue(verdicts(server).stream().anyMatch(l -> l.contains(" in " + LOADER + "@") && l.endsWith(": applied")),
                    "applied in the child loader: " + verdicts(server));
        }

        // at start
        Path rec = KwikIt.freshFile(dir, "platform-parent.jfr");
        try (KwikIt.Server server = start(dir, "server-platform-parent", "platform", AGENT_ARGS + ";jfr=" + rec)) {
            assertKwiksOwn(download(dir, "client-platform-parent", server, 2));
            assertSkipped(server);
        }
        List<RecordedEvent> events = RecordingFile.readAllEvents(rec);
        assertTrue(events.stream().anyMatch(e -> e.getEventType().getName().equals(EventNames.AGENT_LIFECYCLE)),
                "the agent's recording was written: " + events.size() + " events");
        List<String> assigned = events.stream().filter(e -> e.getEventType().getName().equals(EventNames.ALGORITHM_ASSIGNED))
                .map(Object::toString).collect(Collectors.toList());
        assertEquals(List.of(), assigned, "no connection was assigned an algorithm");
        // the skip is in the recording as well: ModuleVerdict events of the loader, every one "skipped" with the reason
        List<RecordedEvent> verdicts = events.stream().filter(e -> e.getEventType().getName().equals(EventNames.MODULE_VERDICT)
                && e.getString(EventFields.CLASS_LOADER).startsWith(LOADER + "@")).collect(Collectors.toList());
        assertTrue(!verdicts.isEmpty() && verdicts.stream().allMatch(e -> "skipped".equals(e.getString(EventFields.VERDICT))
                && e.getString(EventFields.REASON).startsWith(SKIPPED.substring(": skipped: ".length()))),
                "ModuleVerdict events of " + LOADER + ": " + verdicts);

        // by late attach: the loaded kwik classes are not retransformed in that loader either
        try (KwikIt.Server server = start(dir, "server-platform-parent-late", "platform", null)) {
            // kwik's classes loaded and used before the attach
            KwikIt.ClientRun before = KwikIt.runClient(dir, "client-before-attach", null, Duration.ofSeconds(120),
                    UnpatchedKwik.overLoopback("--port", Integer.toString(server.port), "--mode", "down", "--bytes",
                            "100000", "--seed", "3"));
            assertTrue(before.allOk(1), before.describe + server.jvm.describe());
            KwikIt.attach(server.jvm.pid(), AGENT_ARGS);
            assertKwiksOwn(download(dir, "client-after-attach", server, 4));
            assertSkipped(server);
        }
    }

    /** The download's connection created kwik's own controller and none of ours. */
    private static void assertKwiksOwn(HeapClasses.During<KwikIt.ClientRun> d) {
        assertEquals(Set.of(), d.algorithms(), "none of the agent's algorithms was created: " + d.created());
        assertTrue(d.count(HeapClasses.KWIK_NEW_RENO) >= 1, "kwik's own controller was created: " + d.created());
        assertEquals(0, d.count("dev.ccagent.agent.kwik.KwikControllerAdapter"), "no adapter: " + d.created());
    }

    /** The agent's verdict for the loader names it and the reason, and nothing says "applied" there. */
    private static void assertSkipped(KwikIt.Server server) {
        List<String> verdicts = verdicts(server);
        // the swap, the observe-only spin hooks and the stream-stall fix: each skipped with the reason
        for (String module : List.of("kwik 0.10.x (tech.kwik.core) ", "kwik fix.kwik-stream-stall ")) {
            assertTrue(verdicts.stream().anyMatch(l -> l.contains(module) && l.contains(" in " + LOADER + "@")
                    && l.contains(SKIPPED)), module + "skipped with its reason: " + verdicts + "\n" + server.jvm.describe());
        }
        assertTrue(verdicts.stream().allMatch(l -> l.contains(SKIPPED)), "nothing applied, one reason: " + verdicts);
        for (String line : server.agentLines()) {
            assertTrue(!line.contains(" ERROR "), "agent error: " + line);
        }
    }

    /** The agent's module verdict lines about kwik. */
    private static List<String> verdicts(KwikIt.Server server) {
        return server.agentLines().stream().filter(l -> l.contains("kwik") && (l.contains(": applied")
                || l.contains(": skipped"))).collect(Collectors.toList());
    }
}
