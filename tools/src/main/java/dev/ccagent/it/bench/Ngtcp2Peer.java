package dev.ccagent.it.bench;

import dev.ccagent.it.DebianTool;
import dev.ccagent.it.ProcessCpu;

import java.io.IOException;
import java.io.InputStream;
import java.net.DatagramSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A peer implementation as a row of the benchmark matrix: ngtcp2's example HTTP/3 server ({@code gtlsserver},
 * C, Debian's {@code ngtcp2-server}) with one of ngtcp2's congestion controllers ({@code --cc=}), and ngtcp2's
 * example client ({@code gtlsclient}) downloading one file per transfer through the same link emulator as the
 * kwik rows. Nothing of ours runs in either process; what they did is read from outside them:
 * <ul>
 *   <li>the transfer's time from the client's own debug log (ngtcp2 stamps each line with milliseconds since
 *       the connection began): from the frame that sends the request on stream 0 to the line where nghttp3
 *       closes that stream, all data in; the same span as the kwik client's "request to last byte";</li>
 *   <li>the file's SHA-256 against the served file's;</li>
 *   <li>smoothed RTT and the packets declared lost from the server's qlog ({@code recovery:metrics_updated},
 *       {@code recovery:packet_lost}), one file per connection named by the server's connection id, which the
 *       client's log gives;</li>
 *   <li>the server's CPU from {@code /proc}.</li>
 * </ul>
 */
final class Ngtcp2Peer implements AutoCloseable {

    static final String SERVER = "gtlsserver";
    static final String CLIENT = "gtlsclient";
    /** Client idle timeout: a transfer that stops this long ends the client with an error. */
    static final int CLIENT_IDLE_SECONDS = 20;

    private static final Pattern LINE_TIME = Pattern.compile("^I(\\d{8}) ");
    /** The request: the client's first STREAM frame on stream 0. */
    private static final Pattern REQUEST = Pattern.compile("^I(\\d{8}) \\S+ frm tx \\d+ 1RTT STREAM\\(0x0[89a-f]\\) id=0x0 ");
    private static final Pattern STREAM_CLOSED = Pattern.compile("^HTTP stream 0 closed");
    private static final Pattern SERVER_SCID = Pattern.compile(" pkt rx .* scid=0x([0-9a-f]+) .*type=Initial");
    private static final Pattern QLOG_TIME = Pattern.compile("\"time\":([0-9.]+)");
    private static final Pattern QLOG_SRTT = Pattern.compile("\"smoothed_rtt\":([0-9.]+)");

    final String cc;
    final Process server;
    final int port;
    final Path qlogDir;
    private final Path log;

    private Ngtcp2Peer(String cc, Process server, int port, Path qlogDir, Path log) {
        this.cc = cc;
        this.server = server;
        this.port = port;
        this.qlogDir = qlogDir;
        this.log = log;
    }

    /**
     * Starts {@code gtlsserver} with {@code --cc=cc} on a free port of 127.0.0.1, serving {@code htdocs}, its qlogs
     * into {@code work/name-qlog}.
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
        return new Ngtcp2Peer(cc, p, port, qlog, log);
    }

    /** One download as ngtcp2's client saw it; {@code ok} only when it exited 0 with every byte of the file. */
    static final class Transfer {
        long bytes;
        double seconds = Double.NaN;
        boolean ok;
        String error = "";
        /** The server's connection id: its qlog's file name. */
        String serverCid;
        double cpuSeconds = -1;

        double mbps() {
            return ok ? bytes * 8 / seconds / 1e6 : 0;
        }
    }

    /**
     * Downloads {@code file} (served from this server's document root, {@code served} its content) with a fresh
     * client through {@code port} (the emulator's, or this server's for plain loopback).
     */
    Transfer download(DebianTool clientTool, int port, String file, Path served, Path work, int index)
            throws IOException, InterruptedException {
        Path dir = Files.createDirectories(work.resolve("ngtcp2-" + cc + "-dl-" + index));
        Path clientLog = work.resolve("ngtcp2-" + cc + "-client-" + index + ".log");
        long cpu0 = ProcessCpu.totalNanos(server.pid());
        Process c = clientTool.command(List.of("--no-quic-dump", "--no-http-dump", "--exit-on-all-streams-close",
                        "--download=" + dir, "--timeout=" + CLIENT_IDLE_SECONDS + "s", "127.0.0.1", Integer.toString(port),
                        "https://127.0.0.1:" + port + "/" + file))
                .redirectErrorStream(true).redirectOutput(clientLog.toFile()).start();
        Transfer t = new Transfer();
        try {
            if (!c.waitFor(900, TimeUnit.SECONDS)) {
                t.error = "client did not exit in 900 s";
                return t;
            }
        } finally {
            c.destroyForcibly();
        }
        long cpu1 = ProcessCpu.totalNanos(server.pid());
        t.cpuSeconds = cpu0 >= 0 && cpu1 >= 0 ? (cpu1 - cpu0) / 1e9 : -1;
        Path got = dir.resolve(file);
        t.bytes = Files.exists(got) ? Files.size(got) : 0;
        try {
            readClientLog(Files.readAllLines(clientLog, StandardCharsets.ISO_8859_1), t);
        } finally {
            Files.deleteIfExists(clientLog); // tens of MB of debug lines per transfer
        }
        if (c.exitValue() != 0) {
            t.error = "client exit " + c.exitValue();
        } else if (t.bytes != Files.size(served) || !Arrays.equals(sha256(got), sha256(served))) {
            t.error = "downloaded " + t.bytes + " bytes, not the served file";
        } else if (Double.isNaN(t.seconds) || t.seconds <= 0) {
            t.error = "no request or stream close in the client's log";
        } else {
            t.ok = true;
        }
        Files.deleteIfExists(got);
        Files.deleteIfExists(dir);
        return t;
    }

    /** The transfer's time (request to stream close) and the server's connection id from a client log. */
    static void readClientLog(List<String> lines, Transfer t) {
        long request = -1;
        long lastStamp = -1;
        long closed = -1;
        for (String line : lines) {
            Matcher m = LINE_TIME.matcher(line);
            if (m.find()) {
                lastStamp = Long.parseLong(m.group(1));
                if (request < 0) {
                    Matcher r = REQUEST.matcher(line);
                    if (r.find()) {
                        request = lastStamp;
                    }
                }
                if (t.serverCid == null) {
                    Matcher s = SERVER_SCID.matcher(line);
                    if (s.find()) {
                        t.serverCid = s.group(1);
                    }
                }
            } else if (closed < 0 && STREAM_CLOSED.matcher(line).find()) {
                closed = lastStamp; // the stamp of the packet whose frames completed the stream
            }
        }
        if (request >= 0 && closed >= request) {
            t.seconds = Math.max(closed - request, 1) / 1e3; // millisecond stamps
        }
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

    static byte[] sha256(Path f) throws IOException {
        try (InputStream in = Files.newInputStream(f)) {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            byte[] buf = new byte[1 << 16];
            for (int n; (n = in.read(buf)) > 0; ) {
                md.update(buf, 0, n);
            }
            return md.digest();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A UDP port free a moment ago (the server takes a port number and binds it itself). */
    static int freeUdpPort() throws IOException {
        try (DatagramSocket s = new DatagramSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** The server's log (empty with {@code -q} unless it failed). */
    String serverLog() throws IOException {
        return Files.exists(log) ? Files.readString(log, StandardCharsets.ISO_8859_1) : "";
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
