package dev.ccagent.it.kwik;

import dev.ccagent.it.Acceptance;
import dev.ccagent.it.ForkedJvm;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The agent on the kwik releases Maven Central serves (0.10.10 and 0.11 are not served), one forked
 * server per version with {@code cc=bbr1;fix.kwik-stream-stall=on}, the client on the class path's kwik:
 * <ul>
 *   <li>0.10.3 (no {@code RecoveryManager.congestionController}): the swap says "skipped: ..." and the
 *       transfer through the lossy link is intact and stock; its goodput is the baseline;</li>
 *   <li>0.10.4, 0.10.7, 0.10.8, 0.10.9: the swap applies, proven by a goodput through the lossy link of
 *       at least {@link LossyLink#FACTOR} times the baseline;</li>
 *   <li>{@code fix.kwik-stream-stall}: applied where the race exists (0.10.7+: {@code sendRequestsQueued}),
 *       "skipped: ..." with the reason on 0.10.4; with it on, no download is retried.</li>
 * </ul>
 */
@Acceptance("the kwik version matrix")
class KwikVersionsTest {

    static final long BYTES = 2_000_000;
    static final String AGENT = "cc=bbr1;log=debug;fix.kwik-stream-stall=on";
    static final String SWAP = "kwik 0.10.x (tech.kwik.core) version ";
    static double baselineMbps;

    /** The server class path with kwik {@code version} instead of the test class path's. */
    static String classPath(String version) {
        String cp = KwikIt.appClassPath();
        if (version.equals("0.10.9")) {
            assertTrue(cp.contains("kwik-0.10.9.jar"), cp);
            return cp;
        }
        String dir = System.getProperty("apps.jars");
        assertTrue(dir != null, "system property apps.jars is not set (run through Maven)");
        Path jar = Path.of(dir, "kwik-" + version + ".jar");
        assertTrue(Files.isRegularFile(jar), jar + " is missing");
        return withJars(ForkedJvm.filterClassPath(cp, e -> !e.endsWith(File.separator + "kwik-0.10.9.jar")), jar);
    }

    /**
     * {@code cp} with the given jars, and siphash 2 instead of 3 (kwik up to 0.10.8 uses siphash 2's
     * {@code SipHasher}; 0.10.9 moved to siphash 3).
     */
    static String withJars(String cp, Path... jars) {
        Path siphash2 = Path.of(System.getProperty("apps.jars"), "siphash-2.0.0.jar");
        assertTrue(Files.isRegularFile(siphash2), siphash2 + " is missing");
        StringBuilder sb = new StringBuilder(ForkedJvm.filterClassPath(cp, e -> !e.contains("siphash-3")));
        sb.append(File.pathSeparator).append(siphash2);
        for (Path j : jars) {
            sb.append(File.pathSeparator).append(j);
        }
        return sb.toString();
    }

    static KwikIt.Server start(Path dir, String version) throws Exception {
        return KwikIt.awaitPort(ForkedJvm.builder("server-" + version, KwikBulkServer.class.getName())
                .classPath(classPath(version))
                .dir(dir)
                .jvmArgs("-Xmx512m", "-XX:+UseSerialGC")
                .javaagent(KwikIt.agentJar(), AGENT)
                .args("--keystore", KwikIt.keyStore().toString())
                .start());
    }

    @BeforeAll
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    static void oldKwikSkipsTheSwapAndRunsStock() throws Exception {
        Path dir = KwikIt.workDir("kwik-versions");
        try (KwikIt.Server server = start(dir, "0.10.3")) {
            LossyLink.Download d = LossyLink.downloadFromUnpatched(dir, "client-0.10.3", server.port, BYTES, 21);
            String stderr = server.jvm.stderr();
            assertTrue(stderr.contains(SWAP + "0.10.3") && stderr.contains(": skipped: ")
                    && stderr.contains("RecoveryManager.congestionController"), stderr);
            assertTrue(!stderr.contains(": applied"), "nothing applies to 0.10.3: " + stderr);
            assertTrue(KwikIt.connectionLines(stderr).isEmpty(), "no connection got our controller: " + stderr);
            baselineMbps = d.mbps();
            System.out.printf(Locale.ROOT, "[it] kwik 0.10.3: skipped, stock %.2f Mbit/s, retries %d (%s)%n",
                    d.mbps(), d.retries(), LossyLink.load());
        }
    }

    @ParameterizedTest(name = "kwik {0}")
    @ValueSource(strings = {"0.10.4", "0.10.7", "0.10.8", "0.10.9"})
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void swapApplies(String version) throws Exception {
        Path dir = KwikIt.workDir("kwik-versions");
        try (KwikIt.Server server = start(dir, version)) {
            LossyLink.Download d = LossyLink.download(dir, "client-" + version, server.port, BYTES, 22);
            String stderr = server.jvm.stderr();
            assertTrue(java.util.regex.Pattern.compile(java.util.regex.Pattern.quote(SWAP + version + " in app@")
                    + "\\p{XDigit}+: applied").matcher(stderr).find(), stderr);
            boolean race = !version.equals("0.10.4");
            String fix = "fix.kwik-stream-stall for kwik " + version + " in app@";
            if (race) {
                assertTrue(stderr.contains(fix) && stderr.matches("(?s).*" + java.util.regex.Pattern.quote(fix)
                        + "\\p{XDigit}+: applied.*"), stderr);
                assertEquals(0, d.retries(), "the fix is applied: no stalled download expected");
            } else {
                assertTrue(stderr.matches("(?s).*" + java.util.regex.Pattern.quote(fix) + "\\p{XDigit}+: skipped: .*")
                        && stderr.contains("sendRequestsQueued"), stderr);
            }
            assertEquals(2, KwikIt.connectionLines(stderr).size(), "warm-up and download got bbr1: " + stderr);
            for (String line : server.agentLines()) {
                assertTrue(!line.contains(" WARN ") && !line.contains(" ERROR "), "agent complained: " + line);
            }
            String figures = String.format(Locale.ROOT, "kwik %s: bbr1 %.2f Mbit/s vs stock (0.10.3) %.2f, retries %d (%s)",
                    version, d.mbps(), baselineMbps, d.retries(), LossyLink.load());
            System.out.println("[it] " + figures);
            assertTrue(d.mbps() >= LossyLink.FACTOR * baselineMbps, "bbr1 did not take over: " + figures);
        }
    }
}
