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
 * A kwik server for the CPU spin tests that runs on kwik 0.10.3 as on 0.10.9 (it names its port as well as
 * its socket, {@link KwikServers#connectorNamingPort}: 0.10.3's builder requires both). Protocol "spin":
 * the client sends a request and closes its side; the server answers {@code ANSWER} bytes of the pattern {@code (byte) (offset %
 * 251)} in writes of {@code CHUNK} bytes (default 64 KiB) and closes. Usage: {@code SpinServerMain
 * KEYSTORE PORTFILE ANSWER [CHUNK]}; runs until standard
 * input closes, then exits normally (JFR dumps on exit).
 */
public final class SpinServerMain {

    public static void main(String[] args) throws Exception {
        Path keystore = Path.of(args[0]);
        Path portFile = Path.of(args[1]);
        long answer = Long.parseLong(args[2]);
        int chunk = args.length > 3 ? Integer.parseInt(args[3]) : 64 * 1024;
        KeyStore ks = SelfSignedKeyStore.load(keystore);
        ServerConnectionConfig cfg = KwikServers.config(30, 16_000_000, 16_000_000, 10).build();
        DatagramSocket socket = KwikServers.loopbackSocket();
        ServerConnector server = KwikServers.connectorNamingPort(socket, ks, cfg);
        KwikServers.acceptStreams(server, "spin", 10, stream ->
                KwikServers.startDaemon("spin-stream", () -> serve(stream, answer, chunk)));
        KwikServers.serveUntilStdinClosed(server, socket, portFile);
    }

    private static void serve(QuicStream stream, long answer, int chunk) {
        try {
            InputStream in = stream.getInputStream();
            byte[] buf = new byte[Math.max(chunk, 4096)];
            while (in.read(buf) >= 0) {
                // the request's content does not matter
            }
            OutputStream out = stream.getOutputStream();
            for (long offset = 0; offset < answer; ) {
                int n = (int) Math.min(chunk, answer - offset);
                for (int i = 0; i < n; i++) {
                    buf[i] = (byte) ((offset + i) % 251);
                }
                out.write(buf, 0, n);
                offset += n;
            }
            out.close();
            System.out.println("answered " + answer + " bytes");
        } catch (Exception e) {
            System.out.println("stream failed: " + e);
        }
    }
}
