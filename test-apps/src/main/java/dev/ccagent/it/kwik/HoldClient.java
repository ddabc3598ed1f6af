package dev.ccagent.it.kwik;

import tech.kwik.core.QuicClientConnection;
import tech.kwik.core.QuicStream;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * TEST/BENCH ONLY: opens N kwik connections to a {@link KwikBulkServer}, optionally downloads
 * {@code bytes} on each (0: handshake only, an idle connection), keeps them all open, prints
 * {@code HOLDING n}, and closes them when stdin closes.
 *
 * <pre>java dev.ccagent.it.kwik.HoldClient PORT CONNECTIONS BYTES</pre>
 */
public final class HoldClient {

    private HoldClient() {
    }

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        int n = Integer.parseInt(args[1]);
        long bytes = Long.parseLong(args[2]);
        List<QuicClientConnection> open = new ArrayList<>();
        byte[] buf = new byte[64 * 1024];
        for (int i = 0; i < n; i++) {
            QuicClientConnection conn = null;
            for (int attempt = 1; conn == null; attempt++) {
                QuicClientConnection c = QuicClientConnection.newBuilder()
                        .uri(URI.create("https://127.0.0.1:" + port))
                        .applicationProtocol(BulkData.ALPN)
                        .noServerCertificateCheck()
                        .connectTimeout(Duration.ofSeconds(30))
                        .maxIdleTimeout(Duration.ofSeconds(600))
                        .build();
                try {
                    c.connect();
                    conn = c;
                } catch (java.io.IOException e) {
                    if (attempt >= 3) {
                        throw e;
                    }
                    System.out.println("RETRY conn=" + i + " (handshake: " + e + ")"); // a loaded machine
                }
            }
            open.add(conn);
            if (bytes > 0) {
                QuicStream stream = conn.createStream(true);
                OutputStream out = stream.getOutputStream();
                out.write(BulkData.header(BulkData.DOWNLOAD, bytes, i));
                out.flush();
                long got = 0;
                try (InputStream in = stream.getInputStream()) {
                    for (int r; (r = in.read(buf)) >= 0; ) {
                        got += r;
                    }
                }
                out.close();
                if (got != bytes) {
                    System.out.println("SHORT conn=" + i + " got=" + got);
                }
            }
        }
        System.out.println("HOLDING " + open.size());
        System.out.flush();
        try (InputStream in = System.in) {
            while (in.read() >= 0) {
                // until the parent closes our stdin
            }
        }
        for (QuicClientConnection c : open) {
            c.closeAndWait(Duration.ofSeconds(1));
        }
        System.exit(0);
    }
}
