package dev.ccagent.it.boot;

import dev.ccagent.it.kwik.BulkData;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Flux;
import reactor.netty.http.Http3SslContextSpec;
import reactor.netty.http.HttpProtocol;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Map;

/**
 * A Spring Boot WebFlux application that serves HTTP/3 only, through Reactor Netty on Netty QUIC
 * (Spring Boot has no HTTP/3 property: a {@link NettyServerCustomizer} switches the auto-configured
 * server to HTTP/3, the way Reactor Netty documents it). One endpoint, {@code GET /bytes?n=N[&seed=S]}:
 * N bytes of {@link BulkData}'s seeded stream (default seed 1), with their content length, so the client
 * checks them by SHA-256. Packaged as a Spring Boot executable jar ({@code java -jar netty-boot-app.jar
 * --keystore=PKCS12 [--server.port=P]}); binds 127.0.0.1 (port 0 unless given) and prints
 * {@code LISTENING port=P} once bound. The key store holds the key and certificate under alias
 * {@code localhost}, password {@code changeit}. Runs until its standard input ends.
 */
@SpringBootApplication(proxyBeanMethods = false)
public class Http3BootApp {

    /** One response chunk: a multiple of 8 so that every chunk starts on one of BulkData's 64-bit words. */
    static final int CHUNK = 16 * 1024;

    public static void main(String[] args) throws IOException {
        SpringApplication app = new SpringApplication(Http3BootApp.class);
        app.setDefaultProperties(Map.of("server.port", "0", "server.address", "127.0.0.1",
                "spring.main.banner-mode", "off"));
        ConfigurableApplicationContext context = app.run(args);
        // runs until its standard input ends (the tests close it), then shuts down cleanly
        while (System.in.read() != -1) {
            // discard
        }
        System.exit(SpringApplication.exit(context));
    }

    /** The auto-configured Reactor Netty server, switched to HTTP/3 with the key store's certificate. */
    @Bean
    NettyServerCustomizer http3(Environment env) throws Exception {
        String path = env.getRequiredProperty("keystore");
        char[] pass = "changeit".toCharArray();
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(Path.of(path))) {
            ks.load(in, pass);
        }
        PrivateKey key = (PrivateKey) ks.getKey("localhost", pass);
        X509Certificate cert = (X509Certificate) ks.getCertificate("localhost");
        return server -> server.protocol(HttpProtocol.HTTP3)
                .secure(spec -> spec.sslContext(Http3SslContextSpec.forServer(key, null, cert)))
                .http3Settings(spec -> spec.idleTimeout(Duration.ofSeconds(15)).maxData(64 << 20)
                        .maxStreamDataBidirectionalLocal(32 << 20).maxStreamDataBidirectionalRemote(32 << 20)
                        .maxStreamsBidirectional(100))
                .doOnBound(s -> {
                    System.out.println("LISTENING port=" + ((InetSocketAddress) s.address()).getPort());
                    System.out.flush();
                });
    }

    @Bean
    RouterFunction<ServerResponse> routes() {
        return RouterFunctions.route().GET("/bytes", req -> {
            long n = Long.parseLong(req.queryParam("n").orElseThrow());
            long seed = Long.parseLong(req.queryParam("seed").orElse("1"));
            return ServerResponse.ok().contentLength(n).body(BodyInserters.fromDataBuffers(bytes(seed, n)));
        }).build();
    }

    /** BulkData's stream for {@code seed}, its first {@code n} bytes in chunks. */
    static Flux<DataBuffer> bytes(long seed, long n) {
        return Flux.generate(() -> 0L, (pos, sink) -> {
            if (pos >= n) {
                sink.complete();
                return pos;
            }
            int len = (int) Math.min(CHUNK, n - pos);
            byte[] chunk = new byte[len];
            BulkData.fill(seed, pos, chunk, 0, len);
            sink.next(DefaultDataBufferFactory.sharedInstance.wrap(chunk));
            return pos + len;
        });
    }
}
