package dev.ccagent.it.bench;

import dev.ccagent.it.BuildTree;
import dev.ccagent.it.ForkedJvm;
import dev.ccagent.it.netty.NettyBulkApp;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Netty QUIC downloads for the benchmark matrix: one forked {@link NettyBulkApp} (server and client
 * in one JVM, the link emulator in-process between them) with the agent and a JFR recording, a
 * warm-up transfer through an unshaped emulator, then the measured transfers one after the other.
 * The server-side connection ids come from the agent's {@code log=debug} lines, in creation order,
 * so each transfer finds its JFR {@code CongestionState} samples.
 */
public final class NettyRun {

    static final Pattern RESULT = Pattern.compile(
            "^RESULT conn=(\\d+) bytes=(\\d+) crcOk=(\\w+) seconds=([\\d.]+) mbps=([\\d.]+) cpuMs=(\\d+)");
    static final Pattern EMULATOR = Pattern.compile("^EMULATOR toClient \\{(.*)}");
    static final Pattern SERVER_CONNECTION = Pattern.compile("DEBUG netty connection side=server scid=([0-9a-f]+)");
    static final Pattern COUNTER = Pattern.compile("(\\w+)=(-?\\d+)");

    /** One measured transfer. */
    public static final class Transfer {
        public int index;
        public long bytes;
        public double seconds;
        public double mbps;
        public boolean ok;
        /** CPU of the whole process (both ends and the emulator) during this transfer, seconds. */
        public double processCpuSeconds;
        /** Hex scid of the server side of this transfer's connection (the JFR connection id), or "?". */
        public String scid = "?";
    }

    /** What one forked run measured. */
    public static final class Outcome {
        public final List<Transfer> transfers = new ArrayList<>();
        /** Counters of the emulator's server → client direction. */
        public Map<String, Long> down = new LinkedHashMap<>();
        public int exit;
        public String stdout = "";
        public String stderr = "";
    }

    private NettyRun() {
    }

    /**
     * Runs {@code connections} downloads of {@code bytes} through {@code link} ({@code null}: plain
     * loopback), after a {@code warmupBytes} warm-up. {@code agentArgs} are the agent's arguments
     * (debug logging is added); the JFR recording goes to {@code jfr} with {@code jfc}'s settings.
     */
    public static Outcome run(BuildTree tree, Path dir, String name, Path keyStore, String storePass, String agentArgs,
                              Path jfc, Path jfr, String link, long bytes, int connections, long warmupBytes,
                              Duration timeout) throws IOException, InterruptedException {
        List<String> args = new ArrayList<>(List.of("keystore=" + keyStore, "storepass=" + storePass,
                "bytes=" + bytes, "connections=" + connections, "warmup=" + warmupBytes));
        if (link != null) {
            args.add("link=" + link);
        }
        ForkedJvm.Builder b = ForkedJvm.builder(name, NettyBulkApp.class.getName())
                .classPath(tree.nettyAppClassPath())
                .dir(dir)
                .jvmArgs("-Xmx512m", "-XX:+UseSerialGC",
                        "-XX:StartFlightRecording=settings=" + jfc + ",filename=" + jfr + ",dumponexit=true")
                .javaagent(tree.agentJar(), agentArgs + ";log=debug")
                .args(args);
        Outcome o = new Outcome();
        try (ForkedJvm app = b.start()) {
            o.exit = app.waitFor(timeout);
            o.stdout = app.stdout();
            o.stderr = app.stderr();
        }
        List<String> scids = new ArrayList<>();
        for (String line : o.stderr.split("\n")) {
            Matcher m = SERVER_CONNECTION.matcher(line);
            if (m.find()) {
                scids.add(m.group(1));
            }
        }
        int skip = warmupBytes > 0 ? 1 : 0; // the warm-up's server connection comes first
        for (String line : o.stdout.split("\n")) {
            Matcher m = RESULT.matcher(line);
            if (m.find()) {
                Transfer t = new Transfer();
                t.index = Integer.parseInt(m.group(1));
                t.bytes = Long.parseLong(m.group(2));
                t.ok = m.group(3).equals("true") && t.bytes == bytes;
                t.seconds = Double.parseDouble(m.group(4));
                t.mbps = Double.parseDouble(m.group(5));
                t.processCpuSeconds = Long.parseLong(m.group(6)) / 1e3;
                int at = skip + t.index;
                t.scid = at < scids.size() ? scids.get(at) : "?";
                o.transfers.add(t);
                continue;
            }
            m = EMULATOR.matcher(line);
            if (m.find()) {
                Matcher c = COUNTER.matcher(m.group(1));
                while (c.find()) {
                    o.down.put(c.group(1), Long.parseLong(c.group(2)));
                }
            }
        }
        return o;
    }
}
