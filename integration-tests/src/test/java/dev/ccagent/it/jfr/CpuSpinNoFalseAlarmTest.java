package dev.ccagent.it.jfr;

import dev.ccagent.it.Acceptance;
import dev.ccagent.jfr.EventNames;
import dev.ccagent.report.RecordingReport;
import dev.ccagent.it.ForkedJvm;
import dev.ccagent.it.emulator.LinkEmulator;
import dev.ccagent.it.emulator.LinkProfile;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The CPU spin detector stays quiet where threads are busy but connections move (kwik 0.10.9, forked
 * JVMs, 127.0.0.1): CPU-bound loopback transfers with the stock controller and named algorithms,
 * lossy links, an idle connection, and a client that stops reading on a kwik without the 0.10.3 loop
 * (the sender waits there: a blocked stream is not a spin). Each run is short; the recording (read
 * with the JDK's parser) must hold no {@code CpuSpin} event, and the server log no spin line.
 */
@Acceptance("no false alarm over CPU-bound and lossy transfers of every algorithm")
class CpuSpinNoFalseAlarmTest {

    static final long UPLOAD = 8_000_000;
    static final long ANSWER = 8_000_000;

    @TempDir
    static Path dir;

    @BeforeAll
    static void keystore() throws Exception {
        ServerProcess.keystore(dir);
    }

    private static void assertNoSpin(Path rec, String log) throws Exception {
        assertFalse(log.contains("CPU spin on"), log);
        RecordingReport r = RecordingReport.read(rec);
        assertNull(r.problem(), "the whole recording was readable");
        assertTrue(r.count(EventNames.AGENT_LIFECYCLE) > 0, "a ccagent recording: " + r.counts());
        assertEquals(0, r.count(EventNames.CPU_SPIN), r.counts().toString());
        // a reader that stops leaves the server's stream blocked by flow control, the stall's look-alike
        assertEquals(0, r.count(EventNames.STREAM_STALL), "no stream stall: " + r.counts());
        assertFalse(log.contains("stream stall on"), log);
    }

    @ParameterizedTest
    @ValueSource(strings = {"stock", "bbr1", "bbr3", "cubic"})
    void cpuBoundLoopbackTransfer(String algorithm) throws Exception {
        Path rec = dir.resolve("bulk-" + algorithm + ".jfr");
        String log;
        long cpu;
        long wall;
        try (ServerProcess server = ServerProcess.start(dir, "cc=" + algorithm + ";jfr=" + rec, ANSWER)) {
            long t0 = System.nanoTime();
            long c0 = server.process.toHandle().info().totalCpuDuration().orElseThrow().toNanos();
            assertEquals(ANSWER, ServerProcess.client(server.port, UPLOAD, 0, 90, () -> { }), server.output());
            wall = System.nanoTime() - t0;
            cpu = server.process.toHandle().info().totalCpuDuration().orElseThrow().toNanos() - c0;
            Thread.sleep(1_000); // one more evaluation after the transfer
            log = server.output();
        }
        System.out.printf("%s: server CPU %.1f s in %.1f s for %d MB each way%n", algorithm, cpu / 1e9, wall / 1e9,
                UPLOAD / 1_000_000);
        assertNoSpin(rec, log);
    }

    @ParameterizedTest
    @ValueSource(strings = {"stock", "bbr1"})
    void lossyLink(String algorithm) throws Exception {
        Path rec = dir.resolve("lossy-" + algorithm + ".jfr");
        String log;
        try (ServerProcess server = ServerProcess.start(dir, "cc=" + algorithm + ";jfr=" + rec, 3_000_000);
             LinkEmulator link = LinkEmulator.start(new InetSocketAddress("127.0.0.1", server.port),
                     LinkProfile.builder().loss(0.01).build(), LinkProfile.builder().loss(0.02).build(), 17)) {
            assertEquals(3_000_000, ServerProcess.client(link.port(), 2_000_000, 0, 120, () -> { }), server.output());
            assertTrue(link.toClientStats().toString().length() > 0);
            System.out.println(algorithm + " lossy link: to client " + link.toClientStats() + ", to server "
                    + link.toServerStats());
            Thread.sleep(1_000);
            log = server.output();
        }
        assertNoSpin(rec, log);
    }

    @Test
    void idleConnectionAndAReaderThatStopsOnAFixedKwik() throws Exception {
        Path rec = dir.resolve("idle.jfr");
        Path portFile = dir.resolve("idle.port");
        String log;
        try (ForkedJvm server = ForkedJvm.builder("fixed-server", SpinServerMain.class.getName())
                .classPath(ServerProcess.serverClassPath())
                .jvmArgs("-Xmx256m", "-XX:+UseSerialGC")
                .javaagent(ServerProcess.agentJar(), "jfr=" + rec + ";fix.kwik-stream-stall=on")
                .args(ServerProcess.keystore(dir).toString(), portFile.toString(), "1000000", "1000")
                .dir(dir).start()) {
            server.awaitLine(Pattern.compile("^listening on"), Duration.ofSeconds(60));
            int port = Integer.parseInt(java.nio.file.Files.readString(portFile).trim());
            try (ForkedJvm idle = CpuSpinTest.stallingClient(dir, "idle-client", port, 0, 5_000, "idle");
                 ForkedJvm stalled = CpuSpinTest.stallingClient(dir, "stalled-client", port, 64 * 1024, 5_000, "resume")) {
                var answered = stalled.awaitLine(Pattern.compile("^answered (\\d+) (\\w+)"), Duration.ofSeconds(120));
                assertEquals("1000000", answered.group(1));
                assertEquals("ok", answered.group(2));
                idle.awaitLine(Pattern.compile("^closed"), Duration.ofSeconds(60));
            }
            server.closeStdin();
            assertEquals(0, server.waitFor(Duration.ofSeconds(60)));
            log = server.stdout() + server.stderr();
        }
        assertNoSpin(rec, log);
    }
}
