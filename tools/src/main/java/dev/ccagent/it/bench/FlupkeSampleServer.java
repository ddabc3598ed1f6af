package dev.ccagent.it.bench;

import dev.ccagent.it.BuildTree;
import dev.ccagent.it.ForkedJvm;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Pattern;

/**
 * A real HTTP/3 server on kwik as a user runs it, for the matrix's {@code flupke/*} rows: Flupke 0.6's own sample
 * file server ({@code tech.kwik.flupke.sample.Http3FileServer}, no class of ours) on kwik 0.10.9 with the agent
 * ({@code cc=NAME}, kwik's stall fix on) recording ccagent's JFR events, downloaded from by the same ngtcp2
 * client as ngtcp2's own server ({@link Ngtcp2Client}), so the two stacks' rows differ by the server alone.
 */
final class FlupkeSampleServer implements AutoCloseable {

    static final String MAIN = "tech.kwik.flupke.sample.Http3FileServer";
    private static final Pattern STARTED = Pattern.compile("Kwik server connector started on port (\\d+)");

    final ForkedJvm jvm;
    final int port;

    private FlupkeSampleServer(ForkedJvm jvm, int port) {
        this.jvm = jvm;
        this.port = port;
    }

    /**
     * Starts the server JVM serving {@code htdocs} on a free port with the agent's {@code agentArgs} and
     * {@code jvmArgs} (the recording), and waits for its start line.
     */
    static FlupkeSampleServer start(BuildTree tree, Path work, String name, String agentArgs, Path htdocs,
                                    Path[] certAndKey, List<String> jvmArgs) throws IOException, InterruptedException {
        int port = Ngtcp2Peer.freeUdpPort(); // the sample server takes a port number and binds it itself
        ForkedJvm jvm = ForkedJvm.builder(name + "-server", MAIN)
                .classPath(tree.flupkeSampleClassPath())
                .dir(work)
                .jvmArgs("-Xmx512m", "-XX:+UseSerialGC")
                .jvmArgs(jvmArgs.toArray(new String[0]))
                .javaagent(tree.agentJar(), agentArgs)
                .args(certAndKey[0].toString(), certAndKey[1].toString(), Integer.toString(port), htdocs.toString())
                .start();
        try {
            jvm.awaitLine(STARTED, Duration.ofSeconds(120));
        } catch (IOException | RuntimeException e) {
            jvm.close();
            throw new IOException(name + ": Flupke's sample server did not start: " + e.getMessage() + jvm.describe(), e);
        }
        return new FlupkeSampleServer(jvm, port);
    }

    /** Stops the JVM (SIGTERM: its recording is written at exit). */
    @Override
    public void close() {
        jvm.close();
    }
}
