package dev.ccagent.it.netty;

import dev.ccagent.it.emulator.LinkEmulator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.quic.QuicChannel;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.Http3SslContextSpec;
import reactor.netty.http.HttpProtocol;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Map;
import java.util.zip.CRC32;

/**
 * A Reactor Netty HTTP/3 download server and client in one JVM (the forked target of
 * {@code NettyFrameworksTest}): {@code connections} downloads of {@code bytes} pattern bytes, each on
 * a new QUIC connection, through the link emulator, each checked by CRC at the client.
 *
 * <p>Reactor Netty 1.3's {@code Http3SettingsSpec} has no congestion-control setting (idle timeout,
 * max data, stream data, streams, field section size, token handler only), so its servers run quiche's
 * default (cubic): that is the application's setting here.
 *
 * <p>The server samples each connection's quiche window through Netty's public path stats
 * ({@link QuicheWindowProbe}, one {@code QUICHE} line per connection, labelled with the connection's
 * id) and records datagram write spacing at its UDP socket ({@code WRITES}).
 * Arguments: {@code keystore=}, {@code connections=}, {@code bytes=}, {@code link=RATE,DELAY_MS,BDP,LOSS},
 * {@code probe=MS}, {@code start-after=FILE} (print {@code LISTENING}, then wait for FILE before the downloads:
 * late attach). Prints {@code RESULT} per download, {@code WRITES}, {@code EMULATOR}, {@code DONE ok=}.
 */
public final class ReactorHttp3App {

    private ReactorHttp3App() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> a = FrameworkApp.arguments(args);
        int connections = Integer.parseInt(a.getOrDefault("connections", "1"));
        long bytes = Long.parseLong(a.getOrDefault("bytes", "1048576"));
        long probe = Long.parseLong(a.getOrDefault("probe", "0"));
        FrameworkApp.ServerKey serverKey = FrameworkApp.serverKey(a.get("keystore"));
        PrivateKey key = serverKey.key();
        X509Certificate cert = serverKey.certificate();

        NettyBulkApp.WriteRecorder recorder = new NettyBulkApp.WriteRecorder();
        boolean ok = true;
        DisposableServer server = null;
        LinkEmulator emulator = null;
        try {
            server = HttpServer.create()
                    .host("127.0.0.1").port(0)
                    .protocol(HttpProtocol.HTTP3)
                    .secure(spec -> spec.sslContext(Http3SslContextSpec.forServer(key, null, cert)))
                    .http3Settings(spec -> spec.idleTimeout(Duration.ofSeconds(15)).maxData(64 << 20)
                            .maxStreamDataBidirectionalLocal(32 << 20).maxStreamDataBidirectionalRemote(32 << 20)
                            .maxStreamsBidirectional(100))
                    .doOnBound(s -> s.channel().pipeline().addFirst("write-recorder", recorder))
                    .handle((req, res) -> {
                        long n = Long.parseLong(req.uri().substring(req.uri().indexOf("n=") + 2));
                        req.withConnection(c -> {
                            QuicChannel qc = (QuicChannel) c.channel().parent();
                            QuicheWindowProbe.start(qc, "scid=" + QuicheWindowProbe.idOf(qc), probe);
                        });
                        return res.header("content-length", Long.toString(n)).send(chunks(n)).then();
                    })
                    .bindNow(Duration.ofSeconds(20));
            InetSocketAddress target = (InetSocketAddress) server.address();
            emulator = FrameworkApp.emulator(a, target, 11);
            if (emulator != null) {
                target = emulator.address();
            }
            System.out.println("LISTENING " + server.address());
            System.out.flush();
            if (a.containsKey("start-after")) {
                // late attach: the test attaches the agent, then creates this file
                Path go = Path.of(a.get("start-after"));
                long until = System.nanoTime() + 90_000_000_000L;
                while (!Files.exists(go)) {
                    if (System.nanoTime() > until) {
                        throw new IllegalStateException("no " + go + " within 90 s");
                    }
                    Thread.sleep(50);
                }
            }
            long expected = NettyBulkApp.expectedCrc(bytes);
            for (int i = 0; i < connections; i++) {
                ok &= download(i, target, bytes, expected);
                QuicheWindowProbe.stopAll(); // the download arrived: its server window is sampled to the end
            }
        } catch (Throwable t) {
            ok = false;
            FrameworkApp.printFailure(t);
        } finally {
            if (server != null) {
                server.disposeNow(Duration.ofSeconds(10));
            }
            FrameworkApp.closeEmulator(emulator);
        }
        System.out.println("WRITES " + recorder.summary());
        FrameworkApp.exit(ok);
    }

    /** The download's pattern bytes as a stream of 16 KiB buffers (the same bytes as NettyBulkApp's). */
    static Flux<ByteBuf> chunks(long n) {
        byte[] pattern = NettyBulkApp.pattern();
        return Flux.generate(() -> 0L, (off, sink) -> {
            if (off >= n) {
                sink.complete();
                return off;
            }
            int start = (int) (off % pattern.length);
            int len = (int) Math.min(pattern.length - start, n - off);
            sink.next(Unpooled.wrappedBuffer(pattern, start, len));
            return off + len;
        });
    }

    /** One download on a new client (so a new QUIC connection), CRC checked. */
    private static boolean download(int i, InetSocketAddress target, long bytes, long expected) {
        CRC32 crc = new CRC32();
        long[] got = new long[1];
        long t0 = System.nanoTime();
        HttpClient client = HttpClient.newConnection()
                .protocol(HttpProtocol.HTTP3)
                .secure(spec -> spec.sslContext(Http3SslContextSpec.forClient()
                        .configure(b -> b.trustManager(InsecureTrustManagerFactory.INSTANCE))))
                .http3Settings(spec -> spec.idleTimeout(Duration.ofSeconds(15)).maxData(64 << 20)
                        .maxStreamDataBidirectionalLocal(32 << 20).maxStreamDataBidirectionalRemote(32 << 20)
                        .maxStreamsBidirectional(100))
                .remoteAddress(() -> target);
        Integer status = client.get().uri("/bytes?n=" + bytes)
                .responseConnection((res, conn) -> conn.inbound().receive()
                        .doOnNext(b -> {
                            got[0] += b.readableBytes();
                            crc.update(b.nioBuffer());
                        })
                        .then(Mono.just(res.status().code())))
                .next()
                .block(Duration.ofSeconds(120));
        double secs = (System.nanoTime() - t0) / 1e9;
        boolean ok = status != null && status == 200 && got[0] == bytes && crc.getValue() == expected;
        FrameworkApp.printResult(i, status, got[0], crc.getValue() == expected, secs);
        return ok;
    }
}
