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
        char[] pwd = "secret".toCharArray();
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = new FileInputStream(keystore.toFile())) {
            ks.load(in, pwd);
        }
        ServerConnectionConfig cfg = ServerConnectionConfig.builder()
                .maxIdleTimeoutInSeconds(30)
                .maxConnectionBufferSize(64_000_000)
                .maxBidirectionalStreamBufferSize(64_000_000)
                .maxOpenPeerInitiatedBidirectionalStreams(10)
                .maxOpenPeerInitiatedUnidirectionalStreams(0)
                .retryRequired(false)
                .connectionIdLength(8)
                .build();
        DatagramSocket socket = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        ServerConnector server = ServerConnector.builder()
                .withSocket(socket)
                .withKeyStore(ks, "server", pwd)
                .withConfiguration(cfg)
                .withLogger(new NullLogger())
                .build();
        server.registerApplicationProtocol("bulk", new ApplicationProtocolConnectionFactory() {
            @Override
            public ApplicationProtocolConnection createConnection(String protocol, QuicConnection connection) {
                return new ApplicationProtocolConnection() {
                    @Override
                    public void acceptPeerInitiatedStream(QuicStream stream) {
                        Thread t = new Thread(() -> serve(stream, responseBytes), "bulk-stream");
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
