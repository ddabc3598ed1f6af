package dev.ccagent.it.kwik;

import tech.kwik.core.QuicStream;
import tech.kwik.core.server.ServerConnectionConfig;
import tech.kwik.core.server.ServerConnector;

import java.io.DataInputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.DatagramSocket;
import java.nio.charset.StandardCharsets;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A kwik bulk-transfer server (see {@link BulkData} for the protocol) on 127.0.0.1, ephemeral port.
 * Prints {@code PORT <n>} on stdout when it accepts connections, then one {@code SERVED ...} line per
 * finished transfer with the process CPU time spent during it. Runs until stdin closes or it is
 * killed.
 *
 * <pre>
 * java dev.ccagent.it.kwik.KwikBulkServer [--stream-window BYTES] [--conn-window BYTES] [--idle-seconds S]
 *      [--write-chunk BYTES (size of each write() of a download, default 32768)]
 *      [--keystore FILE.p12 (password 'secret', alias 'server'; default: a fresh self-signed one)]
 * </pre>
 * The windows are what the server grants the client (initial_max_stream_data_bidi_*, initial_max_data);
 * defaults 10 MB and 16 MB.
 */
public final class KwikBulkServer {

    private KwikBulkServer() {
    }

    public static void main(String[] args) throws Exception {
        long streamWindow = 10_000_000;
        long connWindow = 16_000_000;
        int idleSeconds = 30;
        java.nio.file.Path keyStore = null;
        int writeChunk = 32 * 1024;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--stream-window": streamWindow = Long.parseLong(args[++i]); break;
                case "--conn-window": connWindow = Long.parseLong(args[++i]); break;
                case "--idle-seconds": idleSeconds = Integer.parseInt(args[++i]); break;
                case "--keystore": keyStore = java.nio.file.Path.of(args[++i]); break;
                case "--write-chunk": writeChunk = Integer.parseInt(args[++i]); break;
                default:
                    System.err.println("unknown argument " + args[i]);
                    System.exit(2);
            }
        }
        KeyStore ks = keyStore != null ? SelfSignedKeyStore.load(keyStore) : SelfSignedKeyStore.create();
        ServerConnectionConfig config = KwikServers.config(idleSeconds, connWindow, streamWindow, 16)
                .maxUnidirectionalStreamBufferSize(0)
                .build();
        DatagramSocket socket = KwikServers.loopbackSocket();
        ServerConnector server = KwikServers.connector(socket, ks, config);
        connector = server;
        ExecutorService workers = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "bulk-stream");
            t.setDaemon(true);
            return t;
        });
        final int chunk = writeChunk;
        KwikServers.acceptStreams(server, BulkData.ALPN, 16, stream -> workers.execute(() -> serve(stream, chunk)));
        server.start();
        System.out.println("PORT " + socket.getLocalPort());
        System.out.println("PID " + ProcessHandle.current().pid());
        System.out.flush();
        // until the parent closes our stdin (or kills us)
        try (InputStream in = System.in) {
            KwikServers.awaitStdinClosed(KwikBulkServer::command);
        } finally {
            server.close();
            workers.shutdownNow();
        }
        System.exit(0);
    }

    /** The streams being served, each with the bytes written into it so far (for {@code dump}). */
    static final java.util.Map<QuicStream, java.util.concurrent.atomic.AtomicLong> SERVING =
            new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * A line on standard input: {@code dump ODCID} prints {@code STATE odcid=... written=N <kwik's state>} for each
     * stream being served on that connection (a diagnostic for a stalled transfer; {@link KwikState}).
     */
    static void command(String line) {
        if (!line.startsWith("dump ")) {
            return;
        }
        String odcid = line.substring(5).strip();
        int found = 0;
        for (java.util.Map.Entry<QuicStream, java.util.concurrent.atomic.AtomicLong> e : SERVING.entrySet()) {
            try {
                Object conn = KwikState.field(e.getKey(), "connection");
                if (odcid.equals(KwikBulkClient.originalDcid(conn))) {
                    found++;
                    System.out.println("STATE odcid=" + odcid + " written=" + e.getValue().get() + " " + KwikState.describe(conn));
                }
            } catch (ReflectiveOperationException | RuntimeException ex) {
                System.out.println("STATE odcid=" + odcid + " ? " + ex);
            }
        }
        if (found == 0) {
            System.out.println("STATE odcid=" + odcid + " no stream being served; " + connectionState(odcid));
        }
        System.out.flush();
    }

    private static volatile ServerConnector connector;

    /** kwik's server connection with that original DCID, as its connection registry holds it, and its streams. */
    static String connectionState(String odcid) {
        try {
            Object registry = KwikState.field(connector, "connectionRegistry");
            for (Object proxy : ((java.util.Map<?, ?>) KwikState.field(registry, "currentConnections")).values()) {
                Object conn;
                try {
                    conn = KwikState.field(proxy, "serverConnection");
                } catch (NoSuchFieldException candidate) {
                    continue;
                }
                if (!odcid.equals(KwikBulkClient.originalDcid(conn))) {
                    continue;
                }
                Object sm = KwikState.field(conn, "streamManager");
                Object callback = KwikState.field(sm, "peerInitiatedStreamCallback");
                return "applicationProtocolStarted=" + KwikState.field(conn, "applicationProtocolStarted")
                        + " streams=" + ((java.util.Map<?, ?>) KwikState.field(sm, "streams")).keySet()
                        + " nextPeerBidi=" + KwikState.field(sm, "nextPeerInitiatedBidirectionalStreamId")
                        + " callback=" + (callback == KwikState.field(sm, "NO_OP_CONSUMER") ? "NO_OP" : callback.getClass().getSimpleName())
                        + " callbackExecutor=" + KwikState.field(sm, "callbackExecutor")
                        + " " + KwikState.describe(conn);
            }
            return "no such connection in the registry";
        } catch (ReflectiveOperationException | RuntimeException e) {
            return "? " + e;
        }
    }

    static void serve(QuicStream stream, int writeChunk) {
        java.util.concurrent.atomic.AtomicLong written = new java.util.concurrent.atomic.AtomicLong();
        SERVING.put(stream, written);
        try {
            serveTracked(stream, writeChunk, written);
        } finally {
            SERVING.remove(stream);
        }
    }

    private static void serveTracked(QuicStream stream, int writeChunk, java.util.concurrent.atomic.AtomicLong written) {
        long t0 = System.nanoTime();
        long cpu0 = processCpuNanos();
        long jit0 = jitCpuNanos();
        String mode = "?";
        try (DataInputStream in = new DataInputStream(stream.getInputStream());
             OutputStream out = stream.getOutputStream()) {
            long[] h = BulkData.readHeader(in);
            long bytes = h[1];
            long seed = h[2];
            if (h[0] == BulkData.UPLOAD) {
                mode = "up";
                MessageDigest md = BulkData.sha256();
                byte[] buf = new byte[64 * 1024];
                long count = 0;
                for (int n; (n = in.read(buf)) >= 0; ) {
                    md.update(buf, 0, n);
                    count += n;
                }
                out.write(("OK " + count + " " + BulkData.hex(md.digest()) + "\n").getBytes(StandardCharsets.US_ASCII));
                bytes = count;
            } else if (h[0] == BulkData.DOWNLOAD) {
                mode = "down";
                byte[] buf = new byte[Math.max(64 * 1024, writeChunk)];
                for (long pos = 0; pos < bytes; ) {
                    int n = (int) Math.min(writeChunk, bytes - pos);
                    BulkData.fill(seed, pos, buf, 0, n);
                    out.write(buf, 0, n);
                    pos += n;
                    written.set(pos);
                }
                out.close();
                try {
                    while (in.read(buf) >= 0) {
                        // the client closes its side once it has everything: the transfer is complete
                    }
                } catch (java.io.IOException closed) {
                    // the client closed the connection right after its FIN: complete as well
                }
            } else {
                throw new IllegalArgumentException("bad mode " + h[0]);
            }
            out.close();
            long cpu = processCpuNanos() - cpu0;
            long jit = jit0 < 0 ? -1 : jitCpuNanos() - jit0;
            double seconds = (System.nanoTime() - t0) / 1e9;
            System.out.printf("SERVED mode=%s bytes=%d seconds=%.3f cpuNanos=%d jitCpuNanos=%d%n", mode, bytes, seconds,
                    cpu, jit);
        } catch (Exception e) {
            System.out.println("SERVED mode=" + mode + " error=" + e.toString().replace(' ', '_'));
        }
        System.out.flush();
    }

    /** This JVM's JIT compiler threads' CPU time so far ({@link dev.ccagent.it.ProcessCpu#jitNanos}). */
    static long jitCpuNanos() {
        return dev.ccagent.it.ProcessCpu.jitNanos(ProcessHandle.current().pid());
    }

    /** This process's CPU time (all threads), in nanoseconds; -1 when the JVM cannot tell. */
    static long processCpuNanos() {
        java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean) {
            return ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime();
        }
        return -1;
    }
}
