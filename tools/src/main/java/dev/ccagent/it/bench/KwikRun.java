package dev.ccagent.it.bench;

import dev.ccagent.it.BuildTree;
import dev.ccagent.it.ForkedJvm;
import dev.ccagent.it.emulator.LinkEmulator;
import dev.ccagent.it.emulator.LinkProfile;
import dev.ccagent.it.kwik.KwikBulkClient;
import dev.ccagent.it.kwik.KwikBulkServer;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One measured kwik download for the demo and the benchmarks: a {@link KwikBulkServer} in a forked
 * JVM (with or without the agent), optionally behind an in-process {@link LinkEmulator}, and a
 * {@link KwikBulkClient} in another forked JVM that connects to the emulator's port (or straight to
 * the server on plain loopback). The server is launched by {@link #launch} so that several can start
 * side by side; {@link #run} then transfers and {@link #finish} stops the server so that its JFR
 * recording is written.
 */
public final class KwikRun implements AutoCloseable {

    /** The clients' agent ({@link KwikBulkClient#CLIENT_AGENT}): kwik's two fixes and nothing else. */
    public static final String CLIENT_AGENT = KwikBulkClient.CLIENT_AGENT;


    static final Pattern PORT = Pattern.compile("^PORT (\\d+)");
    static final Pattern RESULT = Pattern.compile(
            "^RESULT conn=(\\d+) odcid=(\\S+) mode=(\\w+) (?:bytes=(\\d+) seconds=([\\d.]+) mbps=([\\d.]+) )?ok=(\\w+)(?: error=(\\S+))?");
    static final Pattern SERVED = Pattern.compile("^SERVED mode=(\\w+) bytes=(\\d+) seconds=([\\d.]+) cpuNanos=(-?\\d+)");
    static final Pattern CONNECTION_LINE = Pattern.compile(
            "\\[ccagent] DEBUG kwik server connection ([0-9a-f]+): (\\w+) arm, ([\\w-]+)");

    /** One transfer as the client saw it, with the arm the server's agent logged for its connection id. */
    public static final class Transfer {
        public final int index;
        public final String odcid;
        public final long bytes;
        public final double seconds;
        public final double mbps;
        public final boolean ok;
        public final String error;
        public String arm = "";
        public String algorithm = "";

        Transfer(Matcher m) {
            index = Integer.parseInt(m.group(1));
            odcid = m.group(2);
            bytes = m.group(4) != null ? Long.parseLong(m.group(4)) : 0;
            seconds = m.group(5) != null ? Double.parseDouble(m.group(5)) : 0;
            mbps = m.group(6) != null ? Double.parseDouble(m.group(6)) : 0;
            ok = m.group(7).equals("true");
            error = m.group(8);
        }
    }

    /** What a finished run measured. */
    public static final class Outcome {
        public final List<Transfer> transfers = new ArrayList<>();
        /** Server CPU during the transfers (sum of the SERVED lines), seconds; -1 when unknown. */
        public double serverCpuSeconds = -1;
        /** Counters of the emulator's server → client direction (empty on plain loopback). */
        public Map<String, Long> down = Map.of();
        public Map<String, Long> up = Map.of();
        public int clientExit;
        public String clientOutput = "";
        public String serverStderr = "";
        public Path jfr;
        /** Wall time from the client's start to its exit, seconds (includes its JVM start). */
        public double clientWallSeconds;

        public boolean allOk(int expected) {
            return clientExit == 0 && transfers.size() == expected && transfers.stream().allMatch(t -> t.ok);
        }

        public long bytes() {
            return transfers.stream().mapToLong(t -> t.bytes).sum();
        }
    }

    private final String name;
    private final Path dir;
    private final ForkedJvm server;
    private final Path jfr;
    private int port = -1;
    private LinkEmulator emulator;

    private KwikRun(String name, Path dir, ForkedJvm server, Path jfr) {
        this.name = name;
        this.dir = dir;
        this.server = server;
        this.jfr = jfr;
    }

    /**
     * Starts a server JVM. {@code agentArgs} null: no agent at all. {@code jfr}: the agent's
     * {@code jfr=} file when the arguments name one (for the outcome), else null. {@code jvmArgs}
     * extra JVM options (e.g. {@code -XX:StartFlightRecording=...}).
     */
    public static KwikRun launch(BuildTree tree, Path dir, String name, Path keyStore, String agentArgs, Path jfr,
                                 List<String> jvmArgs) throws IOException {
        ForkedJvm.Builder b = ForkedJvm.builder(name + "-server", KwikBulkServer.class.getName())
                .classPath(tree.kwikAppClassPath())
                .dir(dir)
                .jvmArgs("-Xmx512m", "-XX:+UseSerialGC")
                .jvmArgs(jvmArgs.toArray(new String[0]))
                .args("--keystore", keyStore.toString());
        if (agentArgs != null) {
            b.javaagent(tree.agentJar(), agentArgs);
        }
        return new KwikRun(name, dir, b.start(), jfr);
    }

    /** Waits for the server's port. */
    public int awaitPort(Duration timeout) throws IOException, InterruptedException {
        if (port < 0) {
            port = Integer.parseInt(server.awaitLine(PORT, timeout).group(1));
        }
        return port;
    }

    public ForkedJvm server() {
        return server;
    }

    /**
     * Runs the client: {@code connections} downloads of {@code bytes}, {@code parallel} at a time,
     * through a link with these profiles (both null: plain loopback). Blocks until the client exits.
     */
    public Outcome run(BuildTree tree, LinkProfile toServer, LinkProfile toClient, long seed, long bytes,
                       int connections, int parallel, Duration timeout, List<String> clientArgs)
            throws IOException, InterruptedException {
        int target = awaitPort(Duration.ofSeconds(90));
        if (toServer != null || toClient != null) {
            emulator = LinkEmulator.start(new InetSocketAddress("127.0.0.1", target),
                    toServer != null ? toServer : LinkProfile.transparent(),
                    toClient != null ? toClient : LinkProfile.transparent(), seed);
            target = emulator.port();
        }
        Outcome o = new Outcome();
        long t0 = System.nanoTime();
        ForkedJvm.Builder b = ForkedJvm.builder(name + "-client", KwikBulkClient.class.getName())
                .classPath(tree.kwikAppClassPath())
                .dir(dir)
                .jvmArgs("-Xmx512m", "-XX:+UseSerialGC")
                .args("--port", Integer.toString(target), "--mode", "down", "--bytes", Long.toString(bytes),
                        "--connections", Integer.toString(connections), "--parallel", Integer.toString(parallel),
                        "--seed", Long.toString(seed), "--timeout-seconds", Long.toString(timeout.toSeconds()))
                .args(clientArgs)
                .javaagent(tree.agentJar(), CLIENT_AGENT);
        try (ForkedJvm client = b.start()) {
            o.clientExit = client.waitFor(timeout.plusSeconds(30));
            o.clientOutput = client.stdout();
        } finally {
            o.clientWallSeconds = (System.nanoTime() - t0) / 1e9;
            if (emulator != null) {
                o.down = emulator.toClientStats();
                o.up = emulator.toServerStats();
                emulator.close();
                emulator = null;
            }
        }
        for (String line : o.clientOutput.split("\n")) {
            Matcher m = RESULT.matcher(line);
            if (m.find()) {
                o.transfers.add(new Transfer(m));
            }
        }
        return o;
    }

    /**
     * Stops the server cleanly (stdin closed, so it exits and JFR writes the recording), then fills
     * in the server-side figures of {@code o}: CPU, the arm per connection id, the JFR path.
     */
    public void finish(Outcome o) throws InterruptedException {
        server.closeStdin();
        try {
            server.waitFor(Duration.ofSeconds(40));
        } catch (IOException e) {
            // killed after the timeout; the recording may be missing
        }
        server.close();
        String out = server.stdout();
        double cpu = 0;
        boolean any = false;
        for (String line : out.split("\n")) {
            Matcher m = SERVED.matcher(line);
            if (m.find() && Long.parseLong(m.group(4)) >= 0) {
                cpu += Long.parseLong(m.group(4)) / 1e9;
                any = true;
            }
        }
        o.serverCpuSeconds = any ? cpu : -1;
        o.serverStderr = server.stderr();
        assignArms(o);
        o.jfr = jfr;
    }

    /** Fills in each transfer's arm and algorithm from the server agent's log=debug lines so far. */
    public void assignArms(Outcome o) {
        Map<String, String[]> arms = new HashMap<>();
        for (String line : server.stderr().split("\n")) {
            Matcher m = CONNECTION_LINE.matcher(line);
            if (m.find()) {
                arms.put(m.group(1), new String[] {m.group(2), m.group(3)});
            }
        }
        for (Transfer t : o.transfers) {
            String[] a = arms.get(t.odcid);
            if (a != null) {
                t.arm = a[0];
                t.algorithm = a[1];
            }
        }
    }

    public String describe() {
        return server.describe();
    }

    @Override
    public void close() {
        if (emulator != null) {
            emulator.close();
            emulator = null;
        }
        server.close();
    }
}
