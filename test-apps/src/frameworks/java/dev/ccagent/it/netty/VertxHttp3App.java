package dev.ccagent.it.netty;

import dev.ccagent.it.emulator.LinkEmulator;
import io.netty.handler.codec.quic.QuicChannel;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientAgent;
import io.vertx.core.http.HttpClientConfig;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerConfig;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.net.ClientSSLOptions;
import io.vertx.core.net.PfxOptions;
import io.vertx.core.net.QuicCongestionControlAlgorithm;
import io.vertx.core.net.ServerSSLOptions;

import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.DatagramChannel;
import java.util.HashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;

/**
 * A Vert.x 5 HTTP/3 download server and client in one JVM (the forked target of
 * {@code NettyFrameworksTest}): the server sets its own congestion algorithm through Vert.x's
 * {@code QuicConfig.setCongestionControlAlgorithm} ({@code app-cc=reno|cubic|bbr}); {@code connections}
 * downloads of {@code bytes}, each on a new client (a new QUIC connection), through the link emulator,
 * CRC checked at the client. The server samples each connection's quiche window through Netty's public
 * path stats ({@link QuicheWindowProbe}; the QUIC channel is reached through Vert.x's internals).
 * Arguments: {@code keystore=}, {@code app-cc=}, {@code connections=}, {@code bytes=},
 * {@code link=RATE,DELAY_MS,BDP,LOSS}, {@code probe=MS}. Prints {@code PORT-SHARE} (whether the server's
 * port could be shared with a client, see {@link #wildcardBindShares}), {@code RESULT} and {@code CLIENT}
 * (the client addresses the emulator saw for it) per download, {@code QUICHE} per connection,
 * {@code EMULATOR}, {@code DONE ok=}.
 */
public final class VertxHttp3App {

    private static final long TIMEOUT_S = 120;

    private VertxHttp3App() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> a = FrameworkApp.arguments(args);
        int connections = Integer.parseInt(a.getOrDefault("connections", "1"));
        long bytes = Long.parseLong(a.getOrDefault("bytes", "1048576"));
        QuicCongestionControlAlgorithm appCc = QuicCongestionControlAlgorithm.valueOf(
                a.getOrDefault("app-cc", "reno").toUpperCase(Locale.ROOT));
        long probe = Long.parseLong(a.getOrDefault("probe", "0"));
        // a loaded 2-core test machine: no "thread blocked" warnings from Vert.x's checker
        Vertx vertx = Vertx.vertx(new VertxOptions().setBlockedThreadCheckInterval(600_000));
        boolean ok = true;
        HttpServer server = null;
        LinkEmulator emulator = null;
        try {
            HttpServerConfig config = new HttpServerConfig().setVersions(HttpVersion.HTTP_3)
                    .setQuicHost("127.0.0.1").setQuicPort(0);
            // Vert.x 5 binds every QUIC endpoint with SO_REUSEADDR by default, the server on 127.0.0.1:0 and
            // each client on 0.0.0.0:0; Linux then may give a client's ephemeral bind the server's own port
            // (measured here: 10 of 300,000 such binds, 0 of 300,000 with the server's option off), and the
            // client, whose datagrams to 127.0.0.1:port go to the server's more specific socket, hears
            // nothing until its idle timeout (docs/testing.md, the flakes table). A shared port needs the
            // option on both sockets; the server's is enough to rule it out (the client's setter throws a
            // ClassCastException in Vert.x 5.2.3, QuicClientConfig.setReuseAddress casts to QuicServerConfig)
            config.getQuicConfig().setReuseAddress(false);
            // the HTTP/3 defaults (unidirectional streams for HTTP/3's control streams) stay; only these change
            config.getQuicConfig().getTransportConfig()
                    .setCongestionControlAlgorithm(appCc)
                    .setInitialMaxData(64 << 20)
                    .setInitialMaxStreamDataBidiLocal(32 << 20)
                    .setInitialMaxStreamDataBidiRemote(32 << 20);
            ServerSSLOptions ssl = new ServerSSLOptions().setKeyCertOptions(
                    new PfxOptions().setPath(a.get("keystore")).setPassword("changeit"));
            server = vertx.createHttpServer(config, ssl).requestHandler(req -> {
                long n = Long.parseLong(req.getParam("n"));
                HttpServerResponse res = req.response();
                res.putHeader("content-length", Long.toString(n));
                QuicChannel qc = quicChannel(req.connection());
                if (qc != null) {
                    QuicheWindowProbe.start(qc, "scid=" + QuicheWindowProbe.idOf(qc), probe);
                }
                pump(res, n, new long[] {0});
            });
            server = get(server.listen());
            int serverPort = server.actualPort();
            InetSocketAddress target = new InetSocketAddress("127.0.0.1", serverPort);
            System.out.println("SERVER vertx HTTP/3 app-cc=" + appCc + " port=" + serverPort);
            System.out.println("PORT-SHARE port=" + serverPort + " shared=" + wildcardBindShares(serverPort));
            emulator = FrameworkApp.emulator(a, target, 13);
            if (emulator != null) {
                target = emulator.address();
            }
            long expected = NettyBulkApp.expectedCrc(bytes);
            Set<SocketAddress> seen = new HashSet<>();
            for (int i = 0; i < connections; i++) {
                try {
                    ok &= download(vertx, i, target, bytes, expected);
                } finally {
                    QuicheWindowProbe.stopAll(); // the download ended: its server window is sampled to the end
                    printNewClients(emulator, seen, i, serverPort); // also for a download that failed
                }
            }
        } catch (Throwable t) {
            ok = false;
            FrameworkApp.printFailure(t);
        } finally {
            if (server != null) {
                try {
                    get(server.close());
                } catch (Exception e) {
                    System.out.println("server close: " + e);
                }
            }
            try {
                get(vertx.close());
            } catch (Exception e) {
                System.out.println("vertx close: " + e);
            }
            FrameworkApp.closeEmulator(emulator);
        }
        FrameworkApp.exit(ok);
    }

    /** The {@code CLIENT} line: the client addresses the emulator saw first during download {@code i}. */
    private static void printNewClients(LinkEmulator emulator, Set<SocketAddress> seen, int i, int serverPort) {
        if (emulator == null) {
            return;
        }
        Set<SocketAddress> now = emulator.clients();
        now.removeAll(seen);
        seen.addAll(now);
        boolean shares = now.stream().anyMatch(c -> ((InetSocketAddress) c).getPort() == serverPort);
        System.out.println("CLIENT conn=" + i + " from=" + now + " serverPort=" + serverPort
                + " sharesServerPort=" + shares);
    }

    /**
     * Whether a socket with SO_REUSEADDR could bind {@code 0.0.0.0:port} beside the server, as a Vert.x
     * client's ephemeral bind may: asked of the kernel, by trying it (a {@code BindException} says no).
     */
    static boolean wildcardBindShares(int port) throws IOException {
        try (DatagramChannel probe = DatagramChannel.open()) {
            probe.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            probe.bind(new InetSocketAddress("0.0.0.0", port));
            return true;
        } catch (BindException refused) {
            return false;
        }
    }

    /** Writes pattern chunks while the response's queue has room; continues from the drain handler. */
    private static void pump(HttpServerResponse res, long n, long[] off) {
        byte[] pattern = NettyBulkApp.pattern();
        while (off[0] < n && !res.writeQueueFull()) {
            int start = (int) (off[0] % pattern.length);
            int len = (int) Math.min(pattern.length - start, n - off[0]);
            res.write(Buffer.buffer().appendBytes(pattern, start, len));
            off[0] += len;
        }
        if (off[0] >= n) {
            res.end();
        } else {
            res.drainHandler(v -> pump(res, n, off));
        }
    }

    private static boolean download(Vertx vertx, int i, InetSocketAddress target, long bytes, long expected)
            throws Exception {
        HttpClientConfig config = new HttpClientConfig().setVersions(HttpVersion.HTTP_3);
        config.getQuicConfig().getTransportConfig()
                .setInitialMaxData(64 << 20)
                .setInitialMaxStreamDataBidiLocal(32 << 20)
                .setInitialMaxStreamDataBidiRemote(32 << 20);
        HttpClientAgent client = vertx.createHttpClient(config,
                new ClientSSLOptions().setTrustAll(true).setHostnameVerificationAlgorithm(""));
        CRC32 crc = new CRC32();
        long[] got = new long[1];
        long t0 = System.nanoTime();
        try {
            Promise<Integer> done = Promise.promise();
            client.request(new RequestOptions().setMethod(HttpMethod.GET).setHost("127.0.0.1")
                            .setPort(target.getPort()).setURI("/bytes?n=" + bytes))
                    .compose(req -> req.send())
                    .onSuccess(res -> {
                        res.handler(b -> {
                            byte[] chunk = b.getBytes();
                            got[0] += chunk.length;
                            crc.update(chunk);
                        });
                        res.exceptionHandler(done::tryFail);
                        res.endHandler(v -> done.tryComplete(res.statusCode()));
                    })
                    .onFailure(done::tryFail);
            int status = get(done.future());
            double secs = (System.nanoTime() - t0) / 1e9;
            FrameworkApp.printResult(i, status, got[0], crc.getValue() == expected, secs);
            return status == 200 && got[0] == bytes && crc.getValue() == expected;
        } finally {
            get(client.close());
        }
    }

    /**
     * The Netty QUIC channel under a Vert.x HTTP/3 connection (Vert.x has no public accessor):
     * {@code Http3Connection.connection} then {@code QuicConnectionImpl.channel}; null (with one line)
     * where Vert.x's internals differ.
     */
    static QuicChannel quicChannel(Object http3Connection) {
        try {
            Object quic = field(http3Connection, "connection");
            return (QuicChannel) field(quic, "channel");
        } catch (ReflectiveOperationException | RuntimeException e) {
            System.out.println("QUICHE unavailable: " + e);
            return null;
        }
    }

    private static Object field(Object o, String name) throws ReflectiveOperationException {
        for (Class<?> c = o.getClass(); c != null; c = c.getSuperclass()) {
            try {
                java.lang.reflect.Field f = c.getDeclaredField(name);
                f.setAccessible(true);
                return f.get(o);
            } catch (NoSuchFieldException next) {
                // the superclass may declare it
            }
        }
        throw new NoSuchFieldException(o.getClass().getName() + "." + name);
    }

    private static <T> T get(Future<T> f) throws Exception {
        return f.toCompletionStage().toCompletableFuture().get(TIMEOUT_S, TimeUnit.SECONDS);
    }
}
