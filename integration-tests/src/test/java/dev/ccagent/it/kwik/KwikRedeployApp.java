package dev.ccagent.it.kwik;

import tech.kwik.core.QuicClientConnection;
import tech.kwik.core.QuicConnection;
import tech.kwik.core.QuicStream;
import tech.kwik.core.log.NullLogger;
import tech.kwik.core.server.ApplicationProtocolConnection;
import tech.kwik.core.server.ApplicationProtocolConnectionFactory;
import tech.kwik.core.server.ServerConnectionConfig;
import tech.kwik.core.server.ServerConnector;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The "web application" of {@link dev.ccagent.it.RedeployMain}: one kwik server and one kwik client in the same
 * class loader, one download of {@code bytes} from the first to the second, checked byte for byte,
 * then everything closed. Runs only inside the throw-away loader: it is copied, alone, into the
 * directory that loader reads (the forked JVM's own class path has neither it nor kwik).
 */
public final class KwikRedeployApp {

    static final String ALPN = "ccagent-redeploy";

    private KwikRedeployApp() {
    }

    static byte at(long i) {
        return (byte) (i * 31 + (i >>> 9));
    }

    /** Returns "ok BYTES" or a description of what went wrong. */
    public static String run(String keyStoreFile, long bytes) throws Exception {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(Path.of(keyStoreFile))) {
            ks.load(in, "secret".toCharArray());
        }
        ServerConnectionConfig config = ServerConnectionConfig.builder()
                .maxIdleTimeoutInSeconds(30)
                .maxConnectionBufferSize(16_000_000)
                .maxBidirectionalStreamBufferSize(10_000_000)
                .maxUnidirectionalStreamBufferSize(0)
                .maxOpenPeerInitiatedBidirectionalStreams(4)
                .maxOpenPeerInitiatedUnidirectionalStreams(0)
                .retryRequired(false)
                .connectionIdLength(8)
                .build();
        DatagramSocket socket = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        ExecutorService workers = Executors.newCachedThreadPool();
        ServerConnector server = ServerConnector.builder()
                .withSocket(socket)
                .withKeyStore(ks, "server", "secret".toCharArray())
                .withConfiguration(config)
                .withLogger(new NullLogger())
                .build();
        QuicClientConnection client = null;
        try {
            server.registerApplicationProtocol(ALPN, new ApplicationProtocolConnectionFactory() {
                @Override
                public ApplicationProtocolConnection createConnection(String protocol, QuicConnection connection) {
                    return new ApplicationProtocolConnection() {
                        @Override
                        public void acceptPeerInitiatedStream(QuicStream stream) {
                            workers.execute(() -> serve(stream, bytes));
                        }
                    };
                }

                @Override
                public int maxConcurrentPeerInitiatedUnidirectionalStreams() {
                    return 0;
                }

                @Override
                public int maxConcurrentPeerInitiatedBidirectionalStreams() {
                    return 4;
                }
            });
            server.start();
            // kwik 0.10.7+ has a stream-send race that now and then stalls a fresh stream (the agent's
            // fix.kwik-stream-stall closes it; the run without the agent cannot): a stalled attempt is
            // closed after 3 s without progress and retried on a new connection
            String result = null;
            for (int attempt = 0; attempt < 10 && result == null; attempt++) {
                client = QuicClientConnection.newBuilder()
                        .uri(URI.create("https://localhost:" + socket.getLocalPort()))
                        .applicationProtocol(ALPN)
                        .noServerCertificateCheck()
                        .connectTimeout(Duration.ofSeconds(30))
                        .maxIdleTimeout(Duration.ofSeconds(30))
                        .logger(new NullLogger())
                        .build();
                result = download(client, bytes);
                client.close();
                client = null;
                if (result == null) {
                    System.out.println("RETRY stalled download");
                }
            }
            return result != null ? result : "stalled 10 times";
        } finally {
            if (client != null) {
                client.close();
            }
            server.close();
            socket.close();
            workers.shutdownNow();
            workers.awaitTermination(10, TimeUnit.SECONDS);
        }
    }

    /** One download on a new connection; null when it stalled (no byte for 3 s after the handshake) and was abandoned. */
    private static String download(QuicClientConnection client, long bytes) throws Exception {
        AtomicLong progress = new AtomicLong();
        AtomicBoolean done = new AtomicBoolean();
        AtomicBoolean stalled = new AtomicBoolean();
        Thread watchdog = new Thread(() -> {
            long last = -1;
            long since = System.nanoTime();
            while (!done.get()) {
                long p = progress.get();
                if (p != last) {
                    last = p;
                    since = System.nanoTime();
                } else if (System.nanoTime() - since > 3_000_000_000L) {
                    stalled.set(true);
                    client.close();
                    return;
                }
                try {
                    Thread.sleep(100);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "redeploy-watchdog");
        watchdog.setDaemon(true);
        try {
            client.connect();
            watchdog.start();
            QuicStream stream = client.createStream(true);
            OutputStream out = stream.getOutputStream();
            out.write(1);
            out.close(); // the request: one byte and the end of the client's side
            InputStream in = stream.getInputStream();
            byte[] buf = new byte[64 * 1024];
            long count = 0;
            for (int n; (n = in.read(buf)) >= 0; ) {
                for (int i = 0; i < n; i++) {
                    if (buf[i] != at(count + i)) {
                        return "mismatch at byte " + (count + i);
                    }
                }
                count += n;
                progress.set(count);
            }
            return count == bytes ? "ok " + count : "short: " + count + " of " + bytes;
        } catch (java.io.IOException e) {
            if (stalled.get()) {
                return null;
            }
            throw e;
        } finally {
            done.set(true);
            if (watchdog.isAlive()) {
                watchdog.join();
            }
        }
    }

    private static void serve(QuicStream stream, long bytes) {
        try (InputStream in = stream.getInputStream(); OutputStream out = stream.getOutputStream()) {
            in.read(); // the request: one byte
            byte[] buf = new byte[32 * 1024];
            for (long pos = 0; pos < bytes; ) {
                int n = (int) Math.min(buf.length, bytes - pos);
                for (int i = 0; i < n; i++) {
                    buf[i] = at(pos + i);
                }
                out.write(buf, 0, n);
                pos += n;
            }

        } catch (Exception e) {
            // the client sees a short transfer
        }
    }
}
