package dev.ccagent.it.netty;

import dev.ccagent.it.emulator.LinkEmulator;
import dev.ccagent.it.kwik.BulkData;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import reactor.core.publisher.Mono;
import reactor.netty.http.Http3SslContextSpec;
import reactor.netty.http.HttpProtocol;
import reactor.netty.http.client.HttpClient;

import java.net.InetSocketAddress;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;

/**
 * A Reactor Netty HTTP/3 client for a server in another JVM (the packaged applications: the Spring Boot
 * jar {@code netty-boot-app}, the shaded Vert.x jar {@code vertx-shaded-app}): {@code connections}
 * downloads of {@code GET /bytes?n=BYTES&seed=S}, each on a new QUIC connection, through the link emulator
 * that this JVM runs in front of the server ({@code link=RATE,DELAY_MS,BDP,LOSS}, the loss towards the
 * client), each checked against {@link BulkData}'s SHA-256 of that stream. With {@code warmup=BYTES}, one
 * download straight from the server first (JIT-compiles both ends over loopback; printed as
 * {@code WARMUP}, not measured). Arguments: {@code port=} (the server's), {@code connections=},
 * {@code bytes=}, {@code seed=}, {@code link=}, {@code warmup=}. Prints {@code RESULT} per download (its
 * {@code crcOk} is the SHA-256 check), {@code EMULATOR}, {@code DONE ok=}.
 */
public final class Http3DownloadClient {

    private Http3DownloadClient() {
    }

    public static void main(String[] args) {
        Map<String, String> a = FrameworkApp.arguments(args);
        int connections = Integer.parseInt(a.getOrDefault("connections", "1"));
        long bytes = Long.parseLong(a.getOrDefault("bytes", "1048576"));
        long seed = Long.parseLong(a.getOrDefault("seed", "1"));
        long warmup = Long.parseLong(a.getOrDefault("warmup", "0"));
        InetSocketAddress server = new InetSocketAddress("127.0.0.1", Integer.parseInt(a.get("port")));
        boolean ok = true;
        LinkEmulator emulator = null;
        try {
            if (warmup > 0) {
                ok &= download("WARMUP", -1, server, warmup, seed + 1000);
            }
            emulator = FrameworkApp.emulator(a, server, seed);
            InetSocketAddress target = emulator != null ? emulator.address() : server;
            for (int i = 0; i < connections; i++) {
                ok &= download("RESULT", i, target, bytes, seed + i);
            }
        } catch (Throwable t) {
            ok = false;
            FrameworkApp.printFailure(t);
        } finally {
            FrameworkApp.closeEmulator(emulator);
        }
        FrameworkApp.exit(ok);
    }

    /** One download on a new client (so a new QUIC connection), checked by SHA-256. */
    private static boolean download(String label, int i, InetSocketAddress target, long bytes, long seed) {
        MessageDigest sha = BulkData.sha256();
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
        Integer status = client.get().uri("/bytes?n=" + bytes + "&seed=" + seed)
                .responseConnection((res, conn) -> conn.inbound().receive()
                        .doOnNext(b -> {
                            got[0] += b.readableBytes();
                            sha.update(b.nioBuffer());
                        })
                        .then(Mono.just(res.status().code())))
                .next()
                .block(Duration.ofSeconds(120));
        double secs = (System.nanoTime() - t0) / 1e9;
        boolean digestOk = got[0] == bytes && Arrays.equals(sha.digest(), BulkData.expectedSha256(seed, bytes));
        if (label.equals("RESULT")) {
            FrameworkApp.printResult(i, status, got[0], digestOk, secs);
        } else {
            System.out.printf(java.util.Locale.ROOT, "%s status=%s bytes=%d sha256Ok=%b seconds=%.3f%n", label, status,
                    got[0], digestOk, secs);
        }
        return status != null && status == 200 && digestOk;
    }
}
