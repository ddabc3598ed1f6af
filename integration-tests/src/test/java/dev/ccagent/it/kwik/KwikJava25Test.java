package dev.ccagent.it.kwik;

import dev.ccagent.it.ForkedJvm;
import dev.ccagent.it.Jdks;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Java 25 as the target JVM (found by {@link Jdks}: {@code JAVA25_HOME}, else a scan of
 * {@code /usr/lib/jvm}; where none is installed the skip is printed): the kwik server runs on it, the
 * agent is injected at start and by late attach (from this Java 17 test JVM), proven by the goodput
 * through the lossy link against the same server's stock goodput.
 */
class KwikJava25Test {

    static final long BYTES = 2_000_000;
    static final String AGENT = "cc=bbr1;log=debug;fix.kwik-stream-stall=on";

    static KwikIt.Server start(Path dir, String name, Path java, String agentArgs) throws Exception {
        return KwikIt.startServer(ForkedJvm.builder(name, KwikBulkServer.class.getName())
                .java(java.toString())
                .classPath(KwikIt.appClassPath())
                .dir(dir), agentArgs);
    }

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void java25AtStartAndByLateAttach() throws Exception {
        Optional<Path> home = Jdks.find(25);
        if (home.isEmpty()) {
            System.out.println("[it] SKIPPED KwikJava25Test: no JDK 25 found (set JAVA25_HOME, or install one under /usr/lib/jvm)");
        }
        Assumptions.assumeTrue(home.isPresent(), "no JDK 25 found (set JAVA25_HOME, or install one under /usr/lib/jvm)");
        Path java = Jdks.java(home.get());
        Path dir = KwikIt.workDir("java25");
        LossyLink.Download stock;
        LossyLink.Download late;
        try (KwikIt.Server server = start(dir, "server-late", java, null)) {
            KwikIt.attach(server.jvm.pid(), AGENT);
            late = LossyLink.download(dir, "client-late", server.port, BYTES, 32);
            // the baseline: the same server reconfigured to kwik's own controller, with the stream-stall fix
            // (as in KwikSpringBootJarTest; had the reconfigure not taken, the ratio below fails)
            stock = LossyLink.stockBaselineOnTheSameServer(dir, "client-stock", server, BYTES, 31);
            String stderr = server.jvm.stderr();
            assertTrue(stderr.contains("installed on attach") && stderr.contains("; Java 25"), stderr);
            KwikSpringBootJarTest.assertNoComplaints(server);
        }
        LossyLink.Download atStart;
        try (KwikIt.Server server = start(dir, "server-start", java, AGENT)) {
            atStart = LossyLink.download(dir, "client-start", server.port, BYTES, 33);
            assertTrue(server.jvm.stderr().contains("; Java 25"), server.jvm.stderr());
            KwikSpringBootJarTest.assertNoComplaints(server);
        }
        String figures = String.format(Locale.ROOT, "Java 25 (%s): stock %.2f, late attach bbr1 %.2f, at start bbr1 %.2f Mbit/s (stock retries %d; %s)",
                home.get(), stock.mbps(), late.mbps(), atStart.mbps(), stock.retries(), LossyLink.load());
        System.out.println("[it] " + figures);
        assertTrue(late.mbps() >= LossyLink.FACTOR * stock.mbps(), "late attach did not change the controller: " + figures);
        assertTrue(atStart.mbps() >= LossyLink.FACTOR * stock.mbps(), "-javaagent did not change the controller: " + figures);
        assertTrue(stock.retries() == 0 && late.retries() == 0 && atStart.retries() == 0, "the stall fix is on: no retries expected: " + figures);
    }
}
