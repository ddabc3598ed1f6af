package dev.ccagent.it.bench;

import dev.ccagent.it.DebianTool;
import dev.ccagent.it.ProcessCpu;
import dev.ccagent.it.kwik.BulkData;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * ngtcp2's example HTTP/3 client ({@code gtlsclient}, C, Debian's {@code ngtcp2-client}) as the matrix's
 * receiver for every HTTP/3 server in it: ngtcp2's own ({@link Ngtcp2Peer}) and Flupke's sample server on kwik
 * with the agent ({@link FlupkeSampleServer}), so that the servers are compared with the same client. One fresh
 * client per transfer; what it did is read from outside it:
 * <ul>
 *   <li>the transfer's time from its debug log (ngtcp2 stamps each line with milliseconds since the connection
 *       began): from the frame that sends the request on stream 0 to the line where nghttp3 closes that stream,
 *       all data in; the same span as the kwik client's "request to last byte";</li>
 *   <li>the file's SHA-256 against the served file's;</li>
 *   <li>the connection's ids from its packets: the original destination id (our recording's connection id) and
 *       the server's source id (the name of ngtcp2's qlog);</li>
 *   <li>the server's CPU from {@code /proc} around the download.</li>
 * </ul>
 */
final class Ngtcp2Client {

    static final String PROGRAM = "gtlsclient";
    /** Idle timeout: a transfer that stops this long ends the client with an error. */
    static final int IDLE_SECONDS = 20;

    private static final Pattern LINE_TIME = Pattern.compile("^I(\\d{8}) ");
    /** The request: the client's first STREAM frame on stream 0. */
    private static final Pattern REQUEST = Pattern.compile("^I(\\d{8}) \\S+ frm tx \\d+ 1RTT STREAM\\(0x0[89a-f]\\) id=0x0 ");
    private static final Pattern STREAM_CLOSED = Pattern.compile("^HTTP stream 0 closed");
    private static final Pattern SERVER_SCID = Pattern.compile(" pkt rx .* scid=0x([0-9a-f]+) .*type=Initial");
    private static final Pattern FIRST_DCID = Pattern.compile(" pkt tx pkn=0 dcid=0x([0-9a-f]+) .*type=Initial");

    private Ngtcp2Client() {
    }

    /** One download as the client saw it; {@code ok} only when it exited 0 with every byte of the file. */
    static final class Transfer {
        long bytes;
        double seconds = Double.NaN;
        boolean ok;
        String error = "";
        /** The server's source connection id (ngtcp2 names its qlog by it). */
        String serverCid;
        /** The client's first destination id: the original destination connection id. */
        String odcid;
        double cpuSeconds = -1;

        double mbps() {
            return ok ? bytes * 8 / seconds / 1e6 : 0;
        }
    }

    /**
     * Downloads {@code https://127.0.0.1:port/file} ({@code served}: the served file) into a fresh directory under
     * {@code work}; {@code serverPid}'s CPU time is read around it (for a JVM, {@code serverIsJvm}, without its JIT
     * compiler threads' share).
     */
    static Transfer download(DebianTool client, int port, String file, Path served, Path work, String tag,
                             long serverPid, boolean serverIsJvm) throws IOException, InterruptedException {
        Path dir = Files.createDirectories(work.resolve(tag + "-dl"));
        Path log = work.resolve(tag + "-client.log");
        long cpu0 = serverCpu(serverPid, serverIsJvm);
        Process c = client.command(List.of("--no-quic-dump", "--no-http-dump", "--exit-on-all-streams-close",
                        "--download=" + dir, "--timeout=" + IDLE_SECONDS + "s", "127.0.0.1", Integer.toString(port),
                        "https://127.0.0.1:" + port + "/" + file))
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        Transfer t = new Transfer();
        try {
            if (!c.waitFor(900, TimeUnit.SECONDS)) {
                t.error = "client did not exit in 900 s";
                return t;
            }
        } finally {
            c.destroyForcibly();
        }
        long cpu1 = serverCpu(serverPid, serverIsJvm);
        t.cpuSeconds = cpu0 >= 0 && cpu1 >= 0 ? (cpu1 - cpu0) / 1e9 : -1;
        Path got = dir.resolve(file);
        t.bytes = Files.exists(got) ? Files.size(got) : 0;
        try {
            readLog(Files.readAllLines(log, StandardCharsets.ISO_8859_1), t);
        } finally {
            Files.deleteIfExists(log); // megabytes of debug lines per transfer
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

    private static long serverCpu(long pid, boolean jvm) {
        long total = ProcessCpu.totalNanos(pid);
        if (!jvm || total < 0) {
            return total;
        }
        long jit = ProcessCpu.jitNanos(pid);
        return jit < 0 ? -1 : total - jit;
    }

    /** The transfer's time (request to stream close) and the connection's ids from a client log. */
    static void readLog(List<String> lines, Transfer t) {
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
                if (t.odcid == null) {
                    Matcher d = FIRST_DCID.matcher(line);
                    if (d.find()) {
                        t.odcid = d.group(1);
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

    static byte[] sha256(Path f) throws IOException {
        try (InputStream in = Files.newInputStream(f)) {
            MessageDigest md = BulkData.sha256();
            byte[] buf = new byte[1 << 16];
            for (int n; (n = in.read(buf)) > 0; ) {
                md.update(buf, 0, n);
            }
            return md.digest();
        }
    }
}
