package dev.ccagent.it.kwik;

import tech.kwik.core.QuicConnection;
import tech.kwik.core.QuicStream;
import tech.kwik.core.log.NullLogger;
import tech.kwik.core.server.ApplicationProtocolConnection;
import tech.kwik.core.server.ApplicationProtocolConnectionFactory;
import tech.kwik.core.server.ServerConnectionConfig;
import tech.kwik.core.server.ServerConnector;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.function.Consumer;

/**
 * What the kwik test servers ({@link KwikBulkServer}, {@link FlupkeServer}, {@code jfr.JfrBulkServer},
 * {@code jfr.SpinServerMain}) share: the connection configuration's common part, a connector on an
 * ephemeral 127.0.0.1 port with {@link SelfSignedKeyStore}'s alias and password, an application protocol
 * that hands each peer-initiated bidirectional stream on, the ready line, and running until stdin closes.
 * Runs on every kwik 0.10.x the tests use (0.10.3 to 0.10.9).
 */
public final class KwikServers {

    private KwikServers() {
    }

    /**
     * A configuration builder with the servers' common settings: idle timeout, connection window, the window
     * per bidirectional stream, how many bidirectional streams a peer may open, no unidirectional ones, no
     * retry, 8-byte connection ids. Callers add or override the rest.
     */
    public static ServerConnectionConfig.Builder config(int idleSeconds, long connectionWindow, long streamWindow,
                                                        int bidirectionalStreams) {
        return ServerConnectionConfig.builder()
                .maxIdleTimeoutInSeconds(idleSeconds)
                .maxConnectionBufferSize(connectionWindow)
                .maxBidirectionalStreamBufferSize(streamWindow)
                .maxOpenPeerInitiatedBidirectionalStreams(bidirectionalStreams)
                .maxOpenPeerInitiatedUnidirectionalStreams(0)
                .retryRequired(false)
                .connectionIdLength(8);
    }

    /** A UDP socket on 127.0.0.1, ephemeral port. */
    public static DatagramSocket loopbackSocket() throws IOException {
        return new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    }

    /**
     * A (not yet started) connector on {@code socket} with the key store's {@link SelfSignedKeyStore#ALIAS}
     * and no logging. kwik 0.10.0-0.10.3 insist on a port even with a socket given (and then use the socket):
     * for them it is built again with the socket's port.
     */
    public static ServerConnector connector(DatagramSocket socket, KeyStore keyStore, ServerConnectionConfig config)
            throws Exception {
        ServerConnector.Builder builder = builder(socket, keyStore, config);
        try {
            return builder.build();
        } catch (IllegalStateException e) {
            return builder.withPort(socket.getLocalPort()).build();
        }
    }

    /**
     * The same connector with the socket's port named from the start, as kwik 0.10.3's builder requires (and
     * later ones accept): one build, never a failed first attempt.
     */
    public static ServerConnector connectorNamingPort(DatagramSocket socket, KeyStore keyStore,
                                                      ServerConnectionConfig config) throws Exception {
        return builder(socket, keyStore, config).withPort(socket.getLocalPort()).build();
    }

    private static ServerConnector.Builder builder(DatagramSocket socket, KeyStore keyStore,
                                                   ServerConnectionConfig config) {
        return ServerConnector.builder()
                .withSocket(socket)
                .withKeyStore(keyStore, SelfSignedKeyStore.ALIAS, SelfSignedKeyStore.PASSWORD)
                .withConfiguration(config)
                .withLogger(new NullLogger());
    }

    /**
     * Registers {@code alpn} on {@code server}: each peer-initiated bidirectional stream goes to
     * {@code onStream} (on kwik's thread: hand it on to one of your own); at most
     * {@code bidirectionalStreams} at a time, no unidirectional ones.
     */
    public static void acceptStreams(ServerConnector server, String alpn, int bidirectionalStreams,
                                     Consumer<QuicStream> onStream) {
        server.registerApplicationProtocol(alpn, new ApplicationProtocolConnectionFactory() {
            @Override
            public ApplicationProtocolConnection createConnection(String protocol, QuicConnection connection) {
                return new ApplicationProtocolConnection() {
                    @Override
                    public void acceptPeerInitiatedStream(QuicStream stream) {
                        onStream.accept(stream);
                    }
                };
            }

            @Override
            public int maxConcurrentPeerInitiatedUnidirectionalStreams() {
                return 0;
            }

            @Override
            public int maxConcurrentPeerInitiatedBidirectionalStreams() {
                return bidirectionalStreams;
            }
        });
    }

    /** A daemon thread named {@code name} running {@code task}, started. */
    public static void startDaemon(String name, Runnable task) {
        Thread t = new Thread(task, name);
        t.setDaemon(true);
        t.start();
    }

    /**
     * The ready line of the port-file servers: writes {@code port} to {@code portFile} (atomically, through
     * a sibling {@code .tmp} file), then prints {@code listening on 127.0.0.1:<port>}.
     */
    public static void announcePortFile(Path portFile, int port) throws IOException {
        Path tmp = portFile.resolveSibling(portFile.getFileName() + ".tmp");
        Files.writeString(tmp, Integer.toString(port));
        Files.move(tmp, portFile);
        System.out.println("listening on 127.0.0.1:" + port);
    }

    /** Until the parent closes our standard input, each line of it to {@code onLine}. */
    public static void awaitStdinClosed(java.util.function.Consumer<String> onLine) throws IOException {
        java.io.BufferedReader r = new java.io.BufferedReader(new java.io.InputStreamReader(System.in,
                java.nio.charset.StandardCharsets.US_ASCII));
        for (String line; (line = r.readLine()) != null; ) {
            onLine.accept(line.strip());
        }
    }

    /** Blocks until the parent closes this process's standard input. */
    public static void awaitStdinClosed() throws IOException {
        while (System.in.read() >= 0) {
            // until the parent closes our standard input
        }
    }

    /**
     * Starts {@code server} (on {@code socket}), writes its port to {@code portFile} ({@link #announcePortFile}) and
     * serves until the parent closes standard input; then closes it, prints "server closed" and exits normally
     * (JFR dumps on exit).
     */
    public static void serveUntilStdinClosed(ServerConnector server, DatagramSocket socket, Path portFile)
            throws IOException {
        server.start();
        announcePortFile(portFile, socket.getLocalPort());
        awaitStdinClosed();
        server.close();
        System.out.println("server closed");
        System.exit(0);
    }
}
