package dev.ccagent.it.kwik;

import dev.ccagent.it.ForkedJvm;
import net.bytebuddy.jar.asm.ClassReader;
import net.bytebuddy.jar.asm.ClassWriter;
import net.bytebuddy.jar.asm.commons.ClassRemapper;
import net.bytebuddy.jar.asm.commons.SimpleRemapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Enumeration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A kwik that lacks one member the agent needs: the test rewrites kwik's jar into a temporary one
 * whose {@code SenderImpl} has its private field {@code recoveryManager} renamed (every access in
 * the class renamed with it, so kwik itself still works). The agent must say "skipped: ..." naming
 * the field, never "applied", and the server must serve an intact stock transfer.
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
        int renamed = rewrite(Path.of(kwikJar), rewritten);
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
            // the module is skipped as a whole (also the stream-stall fix): kwik is unpatched, so a
            // stalled attempt is retried and the retries are counted and reported
            KwikIt.ClientRun run = KwikIt.runClient(dir, "client", null, Duration.ofSeconds(120),
                    "--port", Integer.toString(server.port), "--mode", "down", "--bytes", "3000000", "--seed", "5",
                    "--stall-seconds", "4", "--stall-retries", "5");
            int retries = SafetyIt.count(run.stdout, "RETRY conn=");
            assertTrue(run.allOk(1), run.describe + server.jvm.describe());
            String err = server.jvm.stderr();
            assertTrue(err.contains(": skipped: ") && err.contains("recoveryManager"), "skipped, naming the field:\n" + err);
            assertTrue(!err.contains(": applied"), "never applied:\n" + err);
            assertTrue(KwikIt.connectionLines(err).isEmpty(), "no connection got our controller:\n" + err);
            assertTrue(!err.contains("instrumented tech.kwik"), "nothing of kwik transformed:\n" + err);
            System.out.printf("[it] missing member: skipped, stock transfer intact (%d stall retries)%n", retries);
        }
    }

    /** Copies {@code in} to {@code out}, renaming SenderImpl's field recoveryManager; returns classes rewritten. */
    static int rewrite(Path in, Path out) throws Exception {
        int n = 0;
        try (JarFile jar = new JarFile(in.toFile());
             JarOutputStream os = new JarOutputStream(Files.newOutputStream(out))) {
            for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements(); ) {
                JarEntry entry = e.nextElement();
                if (entry.getName().startsWith("META-INF/") && (entry.getName().endsWith(".SF")
                        || entry.getName().endsWith(".RSA") || entry.getName().endsWith(".EC"))) {
                    continue;
                }
                byte[] bytes;
                try (InputStream is = jar.getInputStream(entry)) {
                    bytes = is.readAllBytes();
                }
                if (entry.getName().equals(SENDER + ".class")) {
                    ClassReader reader = new ClassReader(bytes);
                    ClassWriter writer = new ClassWriter(0);
                    reader.accept(new ClassRemapper(writer,
                            new SimpleRemapper(Map.of(SENDER + ".recoveryManager", "recoveryManagerRenamed"))), 0);
                    bytes = writer.toByteArray();
                    n++;
                }
                os.putNextEntry(new JarEntry(entry.getName()));
                os.write(bytes);
                os.closeEntry();
            }
        }
        return n;
    }
}
