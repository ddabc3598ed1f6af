package dev.ccagent.it.kwik;

import tech.kwik.core.QuicClientConnection;
import tech.kwik.core.QuicStream;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * TEST ONLY: a client a server cannot trust. Each of N connections (four at a time) asks a
 * {@link KwikBulkServer} for a download of BYTES with a 16 kB stream window, reads the first 16 kB,
 * then stops reading for HOLD ms while kwik's keep-alive sends a PING every second (so the server
 * has only ACK-eliciting pings and flow-control-blocked data to deal with), then abandons the
 * connection (closes it without reading the rest). Prints {@code ADVERSARY connections=N stalled=K}.
 *
 * <pre>java dev.ccagent.it.kwik.AdversaryClient PORT CONNECTIONS BYTES HOLD_MS</pre>
 */
public final class AdversaryClient {

    private AdversaryClient() {
    }

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        int n = Integer.parseInt(args[1]);
        long bytes = Long.parseLong(args[2]);
        long hold = Long.parseLong(args[3]);
        AtomicInteger stalled = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        for (int i = 0; i < n; i++) {
            final int id = i;
            pool.submit(() -> {
                QuicClientConnection c = null;
                try {
                    c = QuicClientConnection.newBuilder()
                            .uri(URI.create("https://127.0.0.1:" + port))
                            .applicationProtocol(BulkData.ALPN)
                            .noServerCertificateCheck()
                            .connectTimeout(Duration.ofSeconds(30))
                            .maxIdleTimeout(Duration.ofSeconds(60))
                            .defaultStreamReceiveBufferSize(16_000L)
                            .build();
                    c.connect();
                    c.keepAlive(1);
                    QuicStream stream = c.createStream(true);
                    OutputStream out = stream.getOutputStream();
                    out.write(BulkData.header(BulkData.DOWNLOAD, bytes, id));
                    out.flush();
                    InputStream in = stream.getInputStream();
                    byte[] buf = new byte[16_000];
                    int got = 0;
                    while (got < buf.length) {
                        int r = in.read(buf, got, buf.length - got);
                        if (r < 0) {
                            break;
                        }
                        got += r;
                    }
                    Thread.sleep(hold); // not reading: the server's stream is blocked; pings go on
                    stalled.incrementAndGet();
                } catch (Exception e) {
                    System.out.println("ERROR conn=" + id + " " + e);
                } finally {
                    if (c != null) {
                        c.close(); // abandon: the rest is never read
                    }
                }
            });
        }
        pool.shutdown();
        pool.awaitTermination(10, TimeUnit.MINUTES);
        System.out.println("ADVERSARY connections=" + n + " stalled=" + stalled.get());
        System.out.flush();
        System.exit(0);
    }
}
