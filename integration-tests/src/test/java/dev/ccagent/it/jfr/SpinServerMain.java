package dev.ccagent.it.jfr;

import tech.kwik.core.QuicConnection;
import tech.kwik.core.QuicStream;
import tech.kwik.core.log.NullLogger;
import tech.kwik.core.server.ApplicationProtocolConnection;
import tech.kwik.core.server.ApplicationProtocolConnectionFactory;
import tech.kwik.core.server.ServerConnectionConfig;
import tech.kwik.core.server.ServerConnector;

import java.io.FileInputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;

/**
 * A kwik server for the CPU spin tests that runs on kwik 0.10.3 as on 0.10.9 (it names its port as
 * well as its socket: 0.10.3's builder requires both). Protocol "spin": the client sends a request
 * and closes its side; the server answers {@code ANSWER} bytes of the pattern {@code (byte) (offset %
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
        char[] pwd = "secret".toCharArray();
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = new FileInputStream(keystore.toFile())) {
            ks.load(in, pwd);
        }
        ServerConnectionConfig cfg = ServerConnectionConfig.builder()
                .maxIdleTimeoutInSeconds(30)
                .maxConnectionBufferSize(16_000_000)
                .maxBidirectionalStreamBufferSize(16_000_000)
                .maxOpenPeerInitiatedBidirectionalStreams(10)
                .maxOpenPeerInitiatedUnidirectionalStreams(0)
                .retryRequired(false)
                .connectionIdLength(8)
                .build();
        DatagramSocket socket = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        ServerConnector server = ServerConnector.builder()
                .withPort(socket.getLocalPort())
                .withSocket(socket)
                .withKeyStore(ks, "server", pwd)
                .withConfiguration(cfg)
                .withLogger(new NullLogger())
                .build();
        server.registerApplicationProtocol("spin", new ApplicationProtocolConnectionFactory() {
            @Override
            public ApplicationProtocolConnection createConnection(String protocol, QuicConnection connection) {
                return new ApplicationProtocolConnection() {
                    @Override
                    public void acceptPeerInitiatedStream(QuicStream stream) {
                        Thread t = new Thread(() -> serve(stream, answer, chunk), "spin-stream");
                        t.setDaemon(true);
                        t.start();
                    }
                };
            }

            @Override
            public int maxConcurrentPeerInitiatedUnidirectionalStreams() {
                return 0;
            }

            @Override
            public int maxConcurrentPeerInitiatedBidirectionalStreams() {
                return 10;
            }
        });
        server.start();
        Path tmp = portFile.resolveSibling(portFile.getFileName() + ".tmp");
        Files.writeString(tmp, Integer.toString(socket.getLocalPort()));
        Files.move(tmp, portFile);
        System.out.println("listening on 127.0.0.1:" + socket.getLocalPort());
        while (System.in.read() >= 0) {
            // until the test closes our standard input
        }
        server.close();
        System.out.println("server closed");
        System.exit(0);
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
