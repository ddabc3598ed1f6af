package dev.ccagent.it.jfr;

import dev.ccagent.it.kwik.KwikServers;
import dev.ccagent.it.kwik.SelfSignedKeyStore;
import tech.kwik.core.QuicStream;
import tech.kwik.core.server.ServerConnectionConfig;
import tech.kwik.core.server.ServerConnector;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.DatagramSocket;
import java.nio.file.Path;
import java.security.KeyStore;

/**
 * A tiny kwik server for the JFR tests, run in a forked JVM with the agent. Protocol "bulk": the
 * client uploads bytes and closes its side; the server counts them, then answers {@code responseBytes}
 * bytes and closes. Usage: {@code JfrBulkServer KEYSTORE PORTFILE RESPONSEBYTES}; it writes its port
 * to PORTFILE and runs until its standard input closes, then exits normally (JFR dumps on exit).
 */
public final class JfrBulkServer {

    public static void main(String[] args) throws Exception {
        Path keystore = Path.of(args[0]);
        Path portFile = Path.of(args[1]);
        long responseBytes = Long.parseLong(args[2]);
        KeyStore ks = SelfSignedKeyStore.load(keystore);
        ServerConnectionConfig cfg = KwikServers.config(30, 64_000_000, 64_000_000, 10).build();
        DatagramSocket socket = KwikServers.loopbackSocket();
        ServerConnector server = KwikServers.connector(socket, ks, cfg);
        KwikServers.acceptStreams(server, "bulk", 10, stream ->
                KwikServers.startDaemon("bulk-stream", () -> serve(stream, responseBytes)));
        KwikServers.serveUntilStdinClosed(server, socket, portFile);
    }

    private static void serve(QuicStream stream, long responseBytes) {
        try {
            InputStream in = stream.getInputStream();
            byte[] buf = new byte[64 * 1024];
            long total = 0;
            for (int n; (n = in.read(buf)) >= 0; ) {
                total += n;
            }
            System.out.println("received " + total + " bytes");
            OutputStream out = stream.getOutputStream();
            for (long left = responseBytes; left > 0; ) {
                int n = (int) Math.min(buf.length, left);
                out.write(buf, 0, n);
                left -= n;
            }
            out.close();
            System.out.println("answered " + responseBytes + " bytes");
        } catch (Exception e) {
            System.out.println("stream failed: " + e);
        }
    }
}
