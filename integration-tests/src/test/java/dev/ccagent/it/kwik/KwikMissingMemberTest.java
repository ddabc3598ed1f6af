package dev.ccagent.it.kwik;

import dev.ccagent.it.ForkedJvm;
import dev.ccagent.it.RenamedMember;
import net.bytebuddy.jar.asm.commons.SimpleRemapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A kwik that lacks one member the agent needs: the test rewrites kwik's jar into a temporary one
 * whose {@code SenderImpl} has its private field {@code recoveryManager} renamed (every access in
 * the class renamed with it, so kwik itself still works). The agent must say "skipped: ..." naming
 * the field, never "applied" for the swap, observe only (the spin detector; the stream-stall fix, whose
 * own members are there, applies), and kwik's own controller must carry an intact transfer.
 */
class KwikMissingMemberTest {

    static final String SENDER = "tech/kwik/core/send/SenderImpl";

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void missingMemberSkipsAndServesStock() throws Exception {
        Path dir = KwikIt.workDir("missing-member");
        String cp = KwikIt.appClassPath();
        String kwikJar = Stream.of(cp.split(File.pathSeparator))
                .filter(e -> Path.of(e).getFileName().toString().matches("kwik-\\d.*\\.jar")).findFirst()
                .orElseThrow(() -> new AssertionError("no kwik jar in " + cp));
        Path rewritten = dir.resolve("kwik-0.10.9.jar"); // the same name: the version shows in the verdict
        int renamed = RenamedMember.copy(Path.of(kwikJar), rewritten, SENDER,
                new SimpleRemapper(Map.of(SENDER + ".recoveryManager", "recoveryManagerRenamed")));
        assertEquals(1, renamed, "SenderImpl rewritten");
        String newCp = Stream.of(cp.split(File.pathSeparator)).map(e -> e.equals(kwikJar) ? rewritten.toString() : e)
                .collect(Collectors.joining(File.pathSeparator));

        ForkedJvm jvm = ForkedJvm.builder("server", KwikBulkServer.class.getName())
                .classPath(newCp).dir(dir)
                .jvmArgs("-Xmx512m", "-XX:+UseSerialGC")
                .javaagent(KwikIt.agentJar(), "cc=bbr1;log=debug;fix.kwik-stream-stall=on")
                .args("--keystore", KwikIt.keyStore().toString())
                .start();
        try (KwikIt.Server server = KwikIt.awaitPort(jvm)) {
            // the controller swap is skipped; what needs no swap still runs, each with its own check: the
            // spin detector observes, and the stream-stall fix (its members are all there) applies, so no
            // attempt may stall
            HeapClasses.During<KwikIt.ClientRun> d = HeapClasses.createdDuring(server.jvm.pid(), () ->
                    KwikIt.runClient(dir, "client", null, Duration.ofSeconds(120),
                            "--port", Integer.toString(server.port), "--mode", "down", "--bytes", "3000000", "--seed", "5",
                            "--stall-seconds", "4", "--stall-retries", "0"));
            KwikIt.ClientRun run = d.result();
            assertTrue(run.allOk(1), run.describe + server.jvm.describe());
            assertEquals(0, run.retries(), "the stream-stall fix applied: no stalled attempt\n" + run.stdout);
            String err = server.jvm.stderr();
            assertTrue(err.contains("(tech.kwik.core) version 0.10.9 in ") && err.contains(": skipped: ")
                    && err.contains("recoveryManager"), "skipped, naming the field:\n" + err);
            assertTrue(err.contains("controller swap skipped") && err.contains("observing: spin detector"),
                    "observe-only, said so:\n" + err);
            // 0.10.9's stream has no sendFrame(int) (0.10.0-0.10.3's, where their loop spins): the send-loop window's
            // hooks do not apply, the line says which member, and the spin detector watches alone
            assertTrue(err.contains("(send-loop window not observed: ") && err.contains("sendFrame"),
                    "the window's missing member named:\n" + err);
            assertTrue(!java.util.regex.Pattern.compile("\\(tech\\.kwik\\.core\\) version [0-9.]+ in \\S+: applied")
                    .matcher(err).find(), "the swap never applied:\n" + err);
            // from the JDK's view of the server's heap: kwik's own controller carried the download, none of ours
            assertTrue(d.count(HeapClasses.KWIK_NEW_RENO) >= 1, "no connection seen: " + d.created());
            assertEquals(java.util.Set.of(), d.algorithms(), "no controller of ours created: " + d.created());
            assertTrue(KwikIt.connectionLines(err).isEmpty(), "no connection got our controller:\n" + err);
            System.out.println("[it] missing member: swap skipped, observe-only, stock transfer intact, 0 stall retries");
        }
    }
}
