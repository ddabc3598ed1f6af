package dev.ccagent.it.kwik;

import tech.kwik.core.server.ServerConnectionConfig;
import tech.kwik.core.server.ServerConnector;
import tech.kwik.flupke.server.Http3ApplicationProtocolFactory;

import java.io.OutputStream;
import java.net.DatagramSocket;
import java.nio.file.Path;
import java.security.KeyStore;

/**
 * An HTTP/3 server on flupke (kwik's HTTP/3 library) and the kwik version flupke depends on, on
 * 127.0.0.1, ephemeral port: {@code GET /bytes/N/seed/S} answers N bytes of {@link BulkData}'s stream
 * for seed S. Prints {@code PORT <n>}; runs until stdin closes. Test-only (FlupkeTest).
 *
 * <pre>java dev.ccagent.it.kwik.FlupkeServer --keystore FILE.p12</pre>
 */
public final class FlupkeServer {

    private FlupkeServer() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2 || !args[0].equals("--keystore")) {
            System.err.println("usage: FlupkeServer --keystore FILE.p12");
            System.exit(2);
        }
        KeyStore ks = SelfSignedKeyStore.load(Path.of(args[1]));
        // HTTP/3 needs unidirectional streams (control and QPACK) as well
        ServerConnectionConfig config = KwikServers.config(30, 16_000_000, 10_000_000, 16)
                .maxUnidirectionalStreamBufferSize(1_000_000)
                .maxOpenPeerInitiatedUnidirectionalStreams(10)
                .build();
        DatagramSocket socket = KwikServers.loopbackSocket();
        ServerConnector server = KwikServers.connector(socket, ks, config);
        server.registerApplicationProtocol("h3", new Http3ApplicationProtocolFactory((request, response) -> {
            String[] p = request.path().split("/");
            if (p.length != 5 || !p[1].equals("bytes") || !p[3].equals("seed")) {
                response.setStatus(404);
                response.getOutputStream().close();
                return;
            }
            long n = Long.parseLong(p[2]);
            long seed = Long.parseLong(p[4]);
            response.setStatus(200);
            byte[] buf = new byte[32 * 1024];
            try (OutputStream out = response.getOutputStream()) {
                for (long pos = 0; pos < n; ) {
                    int len = (int) Math.min(buf.length, n - pos);
                    BulkData.fill(seed, pos, buf, 0, len);
                    out.write(buf, 0, len);
                    pos += len;
                }
            }
        }));
        server.start();
        System.out.println("PORT " + socket.getLocalPort());
        System.out.flush();
        KwikServers.awaitStdinClosed();
        System.exit(0); // kwik 0.10.8 and 0.10.9 differ in how a connector is closed
    }
}
