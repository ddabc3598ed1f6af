package dev.ccagent.it.emulator;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A user-space UDP link emulator on 127.0.0.1 (the kernel here has no netem): clients send to
 * {@link #port()}, the emulator relays to the server through the {@code toServer} profile and
 * relays replies back through the {@code toClient} profile. Each client address gets its own
 * upstream socket, so the server sees one peer per client. Seeded: the same seed gives the same
 * loss and jitter decisions for the same packet sequence.
 *
 * <p>Threads: one receive thread (a selector over all sockets) and one sending thread per direction.
 * {@link #close()} stops all of them and closes every socket.
 */
public final class LinkEmulator implements AutoCloseable {

    private static final int SOCKET_BUFFER = 4 << 20;

    private final InetSocketAddress server;
    private final DatagramChannel clientSide;
    private final Selector selector;
    private final LinkDirection toServer;
    private final LinkDirection toClient;
    /** Written by the receive thread only; concurrent so that {@link #clients()} can read it from another. */
    private final Map<SocketAddress, DatagramChannel> upstream = new ConcurrentHashMap<>();
    private final Thread receiver;
    private volatile boolean running = true;

    private LinkEmulator(InetSocketAddress server, LinkProfile toServer, LinkProfile toClient, long seed)
            throws IOException {
        this.server = server;
        long start = System.nanoTime();
        this.selector = Selector.open();
        this.clientSide = open(new InetSocketAddress("127.0.0.1", 0));
        clientSide.register(selector, SelectionKey.OP_READ, null);
        this.toServer = new LinkDirection("to-server", toServer, seed * 2 + 1, start);
        this.toClient = new LinkDirection("to-client", toClient, seed * 2 + 2, start);
        this.receiver = new Thread(this::receiveLoop, "link-emulator-receive");
        this.receiver.setDaemon(true);
        this.receiver.start();
    }

    /** Starts relaying to {@code server}. */
    public static LinkEmulator start(InetSocketAddress server, LinkProfile toServer, LinkProfile toClient, long seed) {
        try {
            return new LinkEmulator(server, toServer, toClient, seed);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the link emulator", e);
        }
    }

    /** The port clients send to, on 127.0.0.1. */
    public int port() {
        try {
            return ((InetSocketAddress) clientSide.getLocalAddress()).getPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public InetSocketAddress address() {
        return new InetSocketAddress("127.0.0.1", port());
    }

    /** Every client address that has sent a datagram through the emulator so far (a copy, in no order). */
    public Set<SocketAddress> clients() {
        return new HashSet<>(upstream.keySet());
    }

    /** Counters of the client → server direction. */
    public Map<String, Long> toServerStats() {
        return statsOf(toServer);
    }

    /** Counters of the server → client direction. */
    public Map<String, Long> toClientStats() {
        return statsOf(toClient);
    }

    LinkDirection.Stats rawToServer() {
        return toServer.stats;
    }

    LinkDirection.Stats rawToClient() {
        return toClient.stats;
    }

    private static long micros(long nanos) {
        return nanos < 0 ? -1 : nanos / 1000;
    }

    private static Map<String, Long> statsOf(LinkDirection d) {
        Map<String, Long> m = new java.util.LinkedHashMap<>();
        LinkDirection.Stats s = d.stats;
        m.put("packetsIn", s.packetsIn.get());
        m.put("bytesIn", s.bytesIn.get());
        m.put("queueDelayP50Micros", micros(s.queueDelayQuantileNanos(0.50)));
        m.put("queueDelayP95Micros", micros(s.queueDelayQuantileNanos(0.95)));
        m.put("packetsOut", s.packetsOut.get());
        m.put("bytesOut", s.bytesOut.get());
        m.put("droppedRandom", s.droppedRandom.get());
        m.put("droppedBurst", s.droppedBurst.get());
        m.put("droppedQueue", s.droppedQueue.get());
        m.put("droppedBlackout", s.droppedBlackout.get());
        m.put("duplicated", s.duplicated.get());
        m.put("maxBacklogBytes", s.maxBacklogBytes.get());
        m.put("maxLatenessNanos", s.maxLatenessNanos.get());
        m.put("inTransit", (long) d.inTransit());
        return m;
    }

    private static DatagramChannel open(InetSocketAddress bind) throws IOException {
        DatagramChannel ch = DatagramChannel.open();
        ch.setOption(StandardSocketOptions.SO_RCVBUF, SOCKET_BUFFER);
        ch.setOption(StandardSocketOptions.SO_SNDBUF, SOCKET_BUFFER);
        ch.bind(bind);
        ch.configureBlocking(false);
        return ch;
    }

    private void receiveLoop() {
        ByteBuffer buffer = ByteBuffer.allocateDirect(65_536);
        try {
            while (running) {
                selector.select(200);
                for (SelectionKey key : selector.selectedKeys()) {
                    if (!key.isValid() || !key.isReadable()) {
                        continue;
                    }
                    DatagramChannel ch = (DatagramChannel) key.channel();
                    while (true) {
                        buffer.clear();
                        SocketAddress from = ch.receive(buffer);
                        if (from == null) {
                            break;
                        }
                        buffer.flip();
                        if (key.attachment() == null) {
                            toServer.admit(buffer, upstreamFor(from), server);
                        } else {
                            toClient.admit(buffer, clientSide, (SocketAddress) key.attachment());
                        }
                    }
                }
                selector.selectedKeys().clear();
            }
        } catch (IOException | ClosedSelectorException e) {
            if (running) {
                System.err.println("link emulator: receive loop failed: " + e);
            }
        }
    }

    private DatagramChannel upstreamFor(SocketAddress client) throws IOException {
        DatagramChannel ch = upstream.get(client);
        if (ch == null) {
            ch = open(new InetSocketAddress("127.0.0.1", 0));
            ch.register(selector, SelectionKey.OP_READ, client);
            upstream.put(client, ch);
        }
        return ch;
    }

    @Override
    public void close() {
        running = false;
        selector.wakeup();
        try {
            receiver.join(2_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        toServer.close();
        toClient.close();
        List<DatagramChannel> all = new ArrayList<>(upstream.values());
        all.add(clientSide);
        for (DatagramChannel ch : all) {
            try {
                ch.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
        try {
            selector.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }
}
