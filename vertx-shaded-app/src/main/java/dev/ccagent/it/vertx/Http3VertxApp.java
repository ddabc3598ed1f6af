package dev.ccagent.it.vertx;

import dev.ccagent.it.kwik.BulkData;
import dev.ccagent.it.netty.ShadedJarArgs;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerConfig;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.net.PfxOptions;
import io.vertx.core.net.ServerSSLOptions;

import java.util.concurrent.TimeUnit;

/**
 * A Vert.x 5 HTTP/3 server with the application's own defaults (no congestion-control setting), packaged
 * as a shaded jar ({@code java -jar vertx-shaded-app.jar keystore=PKCS12 [port=P]}). One endpoint,
 * {@code GET /bytes?n=N[&seed=S]}: N bytes of {@link BulkData}'s seeded stream (default seed 1) with their
 * content length, written while the response's queue has room, so the client checks them by SHA-256.
 * Binds 127.0.0.1 (port 0 unless given), prints {@code LISTENING port=P}, and runs until its standard
 * input ends. The key store holds the key and certificate under alias {@code localhost}, password
 * {@code changeit}.
 */
public final class Http3VertxApp {

    /** One write: a multiple of 8, so that every chunk starts on one of BulkData's 64-bit words. */
    static final int CHUNK = 16 * 1024;

    private Http3VertxApp() {
    }

    public static void main(String[] args) throws Exception {
        ShadedJarArgs parsed = ShadedJarArgs.parse(args);
        String keystore = parsed.keystore();
        int port = parsed.port();
        Vertx vertx = Vertx.vertx(new VertxOptions());
        HttpServerConfig config = new HttpServerConfig().setVersions(HttpVersion.HTTP_3)
                .setQuicHost("127.0.0.1").setQuicPort(port);
        // the HTTP/3 defaults stay (a fresh QuicConfig would drop the unidirectional streams HTTP/3's
        // control streams need); only the flow-control windows grow, so a download is not window-bound
        config.getQuicConfig().getTransportConfig()
                .setInitialMaxData(64 << 20)
                .setInitialMaxStreamDataBidiLocal(32 << 20)
                .setInitialMaxStreamDataBidiRemote(32 << 20);
        ServerSSLOptions ssl = new ServerSSLOptions().setKeyCertOptions(
                new PfxOptions().setPath(keystore).setPassword("changeit"));
        HttpServer server = vertx.createHttpServer(config, ssl).requestHandler(req -> {
            long n = Long.parseLong(req.getParam("n"));
            String s = req.getParam("seed");
            long seed = s == null ? 1 : Long.parseLong(s);
            HttpServerResponse res = req.response();
            res.putHeader("content-length", Long.toString(n));
            write(res, seed, n, new long[] {0});
        });
        server = get(server.listen());
        System.out.println("LISTENING port=" + server.actualPort());
        System.out.flush();
        while (System.in.read() != -1) {
            // discard
        }
        get(server.close());
        get(vertx.close());
        System.exit(0);
    }

    /** Writes chunks while the response's queue has room; continues from the drain handler. */
    private static void write(HttpServerResponse res, long seed, long n, long[] pos) {
        while (pos[0] < n && !res.writeQueueFull()) {
            int len = (int) Math.min(CHUNK, n - pos[0]);
            byte[] chunk = new byte[len];
            BulkData.fill(seed, pos[0], chunk, 0, len);
            res.write(Buffer.buffer(chunk));
            pos[0] += len;
        }
        if (pos[0] >= n) {
            res.end();
        } else {
            res.drainHandler(v -> write(res, seed, n, pos));
        }
    }

    private static <T> T get(Future<T> f) throws Exception {
        return f.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
    }
}
