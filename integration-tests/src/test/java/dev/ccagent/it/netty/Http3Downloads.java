package dev.ccagent.it.netty;

import dev.ccagent.it.ForkedJvm;

import java.io.File;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Downloads from a packaged HTTP/3 server in another JVM by {@code Http3DownloadClient} (Reactor Netty's
 * HTTP/3 client on Netty 4.2.18, compiled at test time like the framework apps) in its own forked JVM,
 * without the agent, through the link emulator it runs in front of the server: the goodput the client
 * measured and the emulator's bottleneck queue, both from outside the server.
 */
final class Http3Downloads {

    static final Pattern RESULT = Pattern.compile("^RESULT conn=(\\d+) status=200 bytes=(\\d+) crcOk=true seconds=([0-9.]+)",
            Pattern.MULTILINE);

    private static String classPath;

    /** One client run's output and figures. */
    static final class Run {
        final NettyApp.Run out;
        final long bytes;
        final double seconds;

        Run(NettyApp.Run out) {
            this.out = out;
            long b = 0;
            double s = 0;
            Matcher m = RESULT.matcher(out.out);
            while (m.find()) {
                b += Long.parseLong(m.group(2));
                s += Double.parseDouble(m.group(3));
            }
            this.bytes = b;
            this.seconds = s;
        }

        /** The downloads' bytes over their summed times (each from request to last byte), Mbit/s. */
        double mbps() {
            return bytes * 8 / seconds / 1e6;
        }

        /** The median wait in the emulator's bottleneck queue towards the client, ms. */
        double queueP50Ms() {
            return QuicheEvidence.figure(out, "EMULATOR", "queueDelayP50Micros") / 1000;
        }

        /** The 95th-percentile wait in the emulator's bottleneck queue towards the client, ms. */
        double queueP95Ms() {
            return QuicheEvidence.figure(out, "EMULATOR", "queueDelayP95Micros") / 1000;
        }

        /** Datagrams the emulator's bottleneck buffer dropped because it was full (towards the client). */
        double queueDrops() {
            return QuicheEvidence.figure(out, "EMULATOR", "droppedQueue");
        }

        /** The bottleneck queue's figures and the goodput, for a failure message. */
        String queue() {
            return String.format(Locale.ROOT, "queue p50 %.1f ms, p95 %.1f ms, %.0f overflow drops, %.2f Mbit/s",
                    queueP50Ms(), queueP95Ms(), queueDrops(), mbps());
        }

        String figures() {
            return String.format(Locale.ROOT, "%.2f Mbit/s (%d B in %.2f s), %s", mbps(), bytes, seconds,
                    out.lines("EMULATOR"));
        }
    }

    private Http3Downloads() {
    }

    private static synchronized String classPath() throws Exception {
        if (classPath == null) {
            String jars = NettyApp.jars("netty.jars.latest") + File.pathSeparator + NettyApp.jars("reactor-netty.jars");
            classPath = NettyApp.frameworkClasses("Http3DownloadClient", jars) + File.pathSeparator + jars;
        }
        return classPath;
    }

    /**
     * {@code connections} downloads of {@code bytes} through {@code link} (RATE,DELAY_MS,BDP,LOSS), after a
     * warm-up of {@code warmup} bytes straight from the server; asserts that every download arrived intact.
     */
    static Run run(Path dir, String name, int serverPort, String link, int connections, long bytes, long warmup,
                   long seed) throws Exception {
        try (ForkedJvm jvm = ForkedJvm.builder(name, "dev.ccagent.it.netty.Http3DownloadClient")
                .dir(dir)
                .jvmArgs("-Xmx256m", "-XX:+UseSerialGC")
                .classPath(classPath())
                .args(List.of("port=" + serverPort, "link=" + link, "connections=" + connections, "bytes=" + bytes,
                        "warmup=" + warmup, "seed=" + seed))
                .start()) {
            int exit = jvm.waitFor(Duration.ofSeconds(240));
            NettyApp.Run r = new NettyApp.Run(exit, jvm.stdout(), jvm.stderr());
            assertEquals(0, exit, name + ": " + r.tail());
            assertTrue(r.out.contains("DONE ok=true"), name + ": " + r.tail());
            Run run = new Run(r);
            assertEquals(connections * bytes, run.bytes, name + ": downloads not all intact: " + r.tail());
            System.out.println("[it] " + name + ": " + run.figures());
            return run;
        }
    }
}
