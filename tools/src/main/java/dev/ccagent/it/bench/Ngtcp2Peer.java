package dev.ccagent.it.bench;

import dev.ccagent.it.DebianTool;

import java.io.IOException;
import java.io.InputStream;
import java.net.DatagramSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A peer implementation as a row of the benchmark matrix: ngtcp2's example HTTP/3 server ({@code gtlsserver},
 * C, Debian's {@code ngtcp2-server}) with one of ngtcp2's congestion controllers ({@code --cc=}), downloaded
 * from by {@link Ngtcp2Client} through the same link emulator as the other rows. Nothing of ours runs in it;
 * smoothed RTT and the packets it declared lost come from its qlog ({@code recovery:metrics_updated},
 * {@code recovery:packet_lost}), one file per connection named by the server's connection id, which the
 * client's log gives.
 */
record Ngtcp2Peer(Process server, int port, Path qlogDir) implements AutoCloseable {

    static final String SERVER = "gtlsserver";

    private static final Pattern QLOG_TIME = Pattern.compile("\"time\":([0-9.]+)");
    private static final Pattern QLOG_SRTT = Pattern.compile("\"smoothed_rtt\":([0-9.]+)");

    /**
     * Starts {@code gtlsserver} with {@code --cc=cc} on a free port of 127.0.0.1, serving {@code htdocs}, its qlogs
     * into {@code work/name-qlog}, its output (nothing with {@code -q} unless it fails) into {@code work/name-server.log}.
     */
    static Ngtcp2Peer start(DebianTool serverTool, Path work, String name, String cc, Path htdocs, Path[] certAndKey)
            throws IOException, InterruptedException {
        Path qlog = Files.createDirectories(work.resolve(name + "-qlog"));
        Path log = work.resolve(name + "-server.log");
        int port = freeUdpPort();
        Process p = serverTool.command(List.of("-q", "--cc=" + cc, "-d", htdocs.toString(), "--qlog-dir=" + qlog,
                        "127.0.0.1", Integer.toString(port), certAndKey[1].toString(), certAndKey[0].toString()))
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        Thread.sleep(300);
        if (!p.isAlive()) {
            throw new IOException(SERVER + " --cc=" + cc + " exited with " + p.exitValue() + ": "
                    + Files.readString(log).strip());
        }
        return new Ngtcp2Peer(p, port, qlog);
    }

    /** What the server's qlog of one connection says. */
    static final class Qlog {
        /** Smoothed RTT every 100 ms of the connection (the value in force at each tick), ms. */
        final List<Double> rttEvery100Ms = new ArrayList<>();
        /** The same from 1.5 s after the first sample on. */
        final List<Double> rttSteady = new ArrayList<>();
        long packetsLost;
    }

    /**
     * The qlog of the connection the server knows as {@code serverCid}, once the server has closed it (ngtcp2
     * closes the file when the connection ends, after its draining period); null if it is not there in 5 s.
     */
    Qlog qlog(String serverCid) throws IOException, InterruptedException {
        if (serverCid == null) {
            return null;
        }
        Path f = qlogDir.resolve(serverCid + ".sqlog");
        long size = -1;
        for (int i = 0; i < 50; i++) {
            long now = Files.exists(f) ? Files.size(f) : -1;
            if (now > 0 && now == size) {
                break;
            }
            size = now;
            Thread.sleep(100);
        }
        if (!Files.exists(f)) {
            return null;
        }
        try (InputStream in = Files.newInputStream(f)) {
            return readQlog(new String(in.readAllBytes(), StandardCharsets.UTF_8), QuicBenchmarks.STEADY_AFTER_MILLIS);
        }
    }

    /** Parses a JSON-SEQ qlog of ngtcp2 0.12 (times relative, in ms). */
    static Qlog readQlog(String text, long steadyAfterMillis) {
        Qlog q = new Qlog();
        double first = Double.NaN;
        double nextTick = Double.NaN;
        double lastTime = Double.NaN;
        double lastRtt = Double.NaN;
        for (String record : text.split("\u001e|\n")) {
            if (record.contains("\"recovery:packet_lost\"")) {
                q.packetsLost++;
                continue;
            }
            if (!record.contains("\"recovery:metrics_updated\"")) {
                continue;
            }
            Matcher tm = QLOG_TIME.matcher(record);
            Matcher rm = QLOG_SRTT.matcher(record);
            if (!tm.find() || !rm.find()) {
                continue;
            }
            double time = Double.parseDouble(tm.group(1));
            if (Double.isNaN(first)) {
                first = time;
                nextTick = time;
            }
            while (nextTick < time) { // ticks before this update: the value in force there
                nextTick = tick(q, lastRtt, nextTick, first, steadyAfterMillis);
            }
            lastRtt = Double.parseDouble(rm.group(1));
            lastTime = time;
        }
        while (nextTick <= lastTime) {
            nextTick = tick(q, lastRtt, nextTick, first, steadyAfterMillis);
        }
        return q;
    }

    private static double tick(Qlog q, double rtt, double tick, double first, long steadyAfterMillis) {
        q.rttEvery100Ms.add(rtt);
        if (tick - first >= steadyAfterMillis) {
            q.rttSteady.add(rtt);
        }
        return tick + 100;
    }

    /** A UDP port free a moment ago (the server takes a port number and binds it itself). */
    static int freeUdpPort() throws IOException {
        try (DatagramSocket s = new DatagramSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** Stops the server and deletes its qlogs (a few MB per transfer; their figures are read by then). */
    @Override
    public void close() throws InterruptedException {
        server.destroy();
        if (!server.waitFor(5, TimeUnit.SECONDS)) {
            server.destroyForcibly();
            server.waitFor(5, TimeUnit.SECONDS);
        }
        try (java.util.stream.Stream<Path> all = Files.list(qlogDir)) {
            for (Path f : all.toList()) {
                Files.deleteIfExists(f);
            }
            Files.deleteIfExists(qlogDir);
        } catch (IOException e) {
            System.err.println("could not delete " + qlogDir + ": " + e);
        }
    }

    /** For a shutdown hook: ends the server without waiting. */
    void destroy() {
        server.destroyForcibly();
    }
}
