package dev.ccagent.it.jfr;

import tech.kwik.core.QuicClientConnection;
import tech.kwik.core.QuicStream;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/** Stock kwik client (the test JVM has no agent): uploads, then reads the answer with a deadline. */
final class BulkClient {

    /** Bytes of the answer received before the deadline (-1 when the upload itself failed). */
    static long transfer(int port, long uploadBytes, Duration deadline, Runnable onConnected) throws Exception {
        return transfer(port, uploadBytes, 0, deadline, onConnected);
    }

    /** With {@code pauseMillis > 0}: one 1200-byte write per pause (a chatty client, not a bulk upload). */
    static long transfer(int port, long uploadBytes, int pauseMillis, Duration deadline, Runnable onConnected)
            throws Exception {
        QuicClientConnection conn = QuicClientConnection.newBuilder()
                .uri(URI.create("https://127.0.0.1:" + port))
                .applicationProtocol("bulk")
                .noServerCertificateCheck()
                .connectTimeout(Duration.ofSeconds(10))
                .maxIdleTimeout(Duration.ofSeconds(30))
                .defaultStreamReceiveBufferSize(16_000_000L)
                .build();
        AtomicLong answered = new AtomicLong();
        try {
            conn.connect();
            onConnected.run();
            QuicStream s = conn.createStream(true);
            Thread io = new Thread(() -> {
                try {
                    OutputStream out = s.getOutputStream();
                    byte[] chunk = new byte[pauseMillis > 0 ? 1200 : 32 * 1024];
                    for (long left = uploadBytes; left > 0; ) {
                        int n = (int) Math.min(chunk.length, left);
                        out.write(chunk, 0, n);
                        left -= n;
                        if (pauseMillis > 0) {
                            out.flush();
                            Thread.sleep(pauseMillis);
                        }
                    }
                    out.close();
                    System.out.println("client uploaded " + uploadBytes);
                    InputStream in = s.getInputStream();
                    byte[] buf = new byte[64 * 1024];
                    for (int n; (n = in.read(buf)) >= 0; ) {
                        answered.addAndGet(n);
                    }
                } catch (Exception e) {
                    System.out.println("client stream: " + e); // the deadline decides
                }
            }, "bulk-client");
            io.setDaemon(true);
            io.start();
            io.join(deadline.toMillis());
            return answered.get();
        } finally {
            // closeAndWait, not close: close() only queues CONNECTION_CLOSE for kwik's sender thread, and
            // BulkClientMain exits the JVM right after, which can take the frame with it; the server then never
            // closes (a CpuSpinTest episode that ended "idle" instead of "close", the flakes table of
            // docs/testing.md). Waiting keeps kwik's closing state, which sends the frame and answers the
            // server's later packets with it again, until the connection is closed (at most 4 PTOs, 2 s)
            conn.closeAndWait(Duration.ofSeconds(2));
        }
    }
}
