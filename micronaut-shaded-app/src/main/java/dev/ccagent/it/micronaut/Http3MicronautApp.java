package dev.ccagent.it.micronaut;

import dev.ccagent.it.netty.ShadedJarArgs;
import io.micronaut.context.ApplicationContext;
import io.micronaut.runtime.Micronaut;
import io.micronaut.runtime.server.EmbeddedServer;

import java.util.HashMap;
import java.util.Map;

/**
 * A Micronaut 4 HTTP/3 server with the application's own congestion default (no congestion-control setting),
 * packaged as a shaded executable jar ({@code java -jar micronaut-shaded-app.jar keystore=PKCS12 [port=P]}).
 * Its one endpoint is {@link DownloadController}'s {@code GET /bytes?n=N[&seed=S]}. The server has one listener
 * of Micronaut's {@code QUIC} family (its guide's way to serve HTTP/3) on 127.0.0.1, port 0 unless given, with
 * TLS from the key store (key and certificate under alias {@code localhost}, password {@code changeit}) and
 * QUIC flow-control windows large enough that a download is not window-bound. Prints {@code LISTENING port=P}
 * and runs until its standard input ends, then closes the application context and exits 0.
 */
public final class Http3MicronautApp {

    private Http3MicronautApp() {
    }

    public static void main(String[] args) throws Exception {
        ShadedJarArgs parsed = ShadedJarArgs.parse(args);
        String keystore = parsed.keystore();
        int port = parsed.port();
        ApplicationContext context = Micronaut.build(new String[0])
                .mainClass(Http3MicronautApp.class)
                .properties(settings(keystore, port))
                .start();
        EmbeddedServer server = context.getBean(EmbeddedServer.class);
        System.out.println("LISTENING port=" + server.getPort());
        System.out.flush();
        while (System.in.read() != -1) {
            // discard
        }
        context.close();
        System.exit(0);
    }

    /** The configuration a Micronaut user would put in application.yml, here from the arguments. */
    static Map<String, Object> settings(String keystore, int port) {
        Map<String, Object> p = new HashMap<>();
        p.put("micronaut.server.netty.listeners.h3.family", "QUIC");
        p.put("micronaut.server.netty.listeners.h3.host", "127.0.0.1");
        p.put("micronaut.server.netty.listeners.h3.port", port);
        p.put("micronaut.server.netty.listeners.h3.ssl", true);
        p.put("micronaut.server.ssl.enabled", true);
        p.put("micronaut.server.ssl.key-store.path", "file:" + keystore);
        p.put("micronaut.server.ssl.key-store.type", "PKCS12");
        p.put("micronaut.server.ssl.key-store.password", "changeit");
        p.put("micronaut.server.ssl.key.alias", "localhost");
        p.put("micronaut.server.netty.http3.initial-max-data", 64 << 20);
        p.put("micronaut.server.netty.http3.initial-max-stream-data-bidirectional-local", 32 << 20);
        p.put("micronaut.server.netty.http3.initial-max-stream-data-bidirectional-remote", 32 << 20);
        return p;
    }
}
