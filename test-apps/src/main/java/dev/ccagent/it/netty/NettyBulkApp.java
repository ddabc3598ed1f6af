package dev.ccagent.it.netty;

import dev.ccagent.it.emulator.LinkEmulator;
import dev.ccagent.it.emulator.LinkProfile;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.ChannelInputShutdownReadComplete;
import io.netty.channel.socket.DatagramPacket;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.handler.codec.quic.InsecureQuicTokenHandler;
import io.netty.handler.codec.quic.QuicChannel;
import io.netty.handler.codec.quic.QuicClientCodecBuilder;
import io.netty.handler.codec.quic.QuicConnectionStats;
import io.netty.handler.codec.quic.QuicCongestionControlAlgorithm;
import io.netty.handler.codec.quic.QuicServerCodecBuilder;
import io.netty.handler.codec.quic.QuicSslContext;
import io.netty.handler.codec.quic.QuicSslContextBuilder;
import io.netty.handler.codec.quic.QuicStreamChannel;
import io.netty.handler.codec.quic.QuicStreamType;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;

import javax.net.ssl.KeyManagerFactory;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;

/**
 * A Netty QUIC server and client in one JVM (the forked target of the Netty tests and the pacing
 * benchmark): {@code connections} sequential checksummed bulk transfers, server → client, over
 * 127.0.0.1, optionally through the link emulator. Written against Netty 4.2's package
 * {@code io.netty.handler.codec.quic}; the tests compile a copy with the incubator's package name
 * (so it uses only what both have, e.g. {@code NioEventLoopGroup}).
 *
 * <p>Arguments (key=value): {@code keystore=PATH}, {@code storepass=PASSWORD} (default "changeit"; also
 * the key's password), {@code connections=N}, {@code bytes=N}, {@code app-cc=reno|cubic|bbr|none},
 * {@code link=RATE_BPS,DELAY_MS,BUFFER_BDP,LOSS[,JITTER_MS[,BURSTY_MS]]} (DELAY_MS one way, 0 allowed; loss and
 * jitter on the data direction, ACKs served every BURSTY_MS when given, as the benchmarks' Wi-Fi-like
 * link), {@code warmup=BYTES} (one transfer first through a fast emulated link, 100 Mbit/s and 10 ms,
 * printed as {@code WARMUP}: JIT-compiles Netty, the agent's pacer and the emulator before anything
 * is measured), {@code probe=MS} (each server connection's quiche window sampled through Netty's public
 * path stats, see {@link QuicheWindowProbe}; one {@code QUICHE} line per connection), {@code start-after=FILE}
 * (late attach: both codecs are built, {@code LISTENING} printed, then the transfers wait for FILE),
 * {@code exit-after=FILE} (after the transfers print {@code TRANSFERS DONE} and wait for FILE before closing,
 * so that a test can ask the running JVM), {@code linger-ms=N} (wait N ms after the transfers),
 * {@code close-times=FILE} (each server connection's close on its event loop timed by the application's own
 * listeners, see {@link CloseTimes}; written to FILE, one line per close, after the transfers),
 * {@code idle-connections=N} (N more client connections opened before the transfers and left idle until
 * they end), {@code loop-spin=AFTER_MS,FOR_MS} (AFTER_MS into the first transfer, a test-only handler spins
 * the server's event loop for FOR_MS in one call, see {@link LoopSpinner}), {@code seconds=N} (after the
 * {@code connections}, more transfers of {@code bytes} until N seconds have passed since the first began),
 * {@code step-dir=DIR} (before transfer i, print {@code READY i} and wait for the file {@code DIR/go-i}: a
 * benchmark reconfigures the running agent between transfers, by attaching anew, and then releases the next).
 * Prints {@code SERVED id=HEX thread=NAME} for each server connection (its own id, its event loop) and
 * {@code CLIENT id=HEX} for each client connection.
 * Prints one {@code RESULT} line per transfer, {@code WRITES} (datagram write spacing at the socket),
 * {@code EMULATOR}, {@code CPU} and finally {@code DONE ok=true|false}.
 */
public final class NettyBulkApp {

    private static final byte[] PATTERN = new byte[16384];
    /** The warm-up link: 100 Mbit/s, 10 ms RTT, 2 BDP of buffer. */
    static final long WARMUP_RATE = 100_000_000;
    static final long WARMUP_DELAY_NANOS = 5_000_000;
    /** {@code probe=MS}: sample each server connection's quiche window this often (0: off). */
    static volatile long probeMillis;
    /** {@code loop-spin}: run once as the first measured transfer starts (null: none). */
    static volatile Runnable duringFirstTransfer;
    private static final java.util.concurrent.atomic.AtomicInteger SERVED = new java.util.concurrent.atomic.AtomicInteger();

    static {
        new java.util.Random(42).nextBytes(PATTERN);
    }

    private NettyBulkApp() {
    }

    public static void main(String[] args) throws Exception {
        System.exit(run(args) ? 0 : 1);
    }

    /**
     * The transfers, as {@link #main} runs them, without exiting: every channel closed and the event loops shut
     * down on return (a redeploy test runs it in a throw-away class loader, then drops the loader). True when
     * every transfer arrived intact.
     */
    public static boolean run(String[] args) throws Exception {
        java.util.Map<String, String> a = arguments(args);
        int connections = Integer.parseInt(a.getOrDefault("connections", "1"));
        long bytes = Long.parseLong(a.getOrDefault("bytes", "4194304"));
        String appCc = a.getOrDefault("app-cc", "none");
        long warmup = Long.parseLong(a.getOrDefault("warmup", "0"));
        probeMillis = Long.parseLong(a.getOrDefault("probe", "0"));
        if (a.containsKey("close-times")) {
            closeTimes = new CloseTimes(connections);
        }
        char[] pass = a.getOrDefault("storepass", "changeit").toCharArray();
        long wall0 = System.nanoTime();
        long cpu0 = cpuNanos();

        QuicSslContext serverSsl = serverSsl(Path.of(a.get("keystore")), pass);

        boolean ok = true;
        @SuppressWarnings("deprecation")
        EventLoopGroup group = new NioEventLoopGroup(2);
        LinkEmulator emulator = null;
        WriteRecorder recorder = new WriteRecorder();
        Channel server = null;
        Channel client = null;
        try {
            QuicServerCodecBuilder sb = serverCodec(serverSsl);
            if (!appCc.equals("none")) {
                sb.congestionControlAlgorithm(QuicCongestionControlAlgorithm.valueOf(appCc.toUpperCase(Locale.ROOT)));
            }
            server = new Bootstrap().group(group).channel(NioDatagramChannel.class).handler(sb.build())
                    .bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
            // closest to the socket (after the agent's pacer, if any): when datagrams really leave
            server.pipeline().addFirst("write-recorder", recorder);
            if (a.containsKey("loop-spin")) {
                String[] spin = a.get("loop-spin").split(",");
                long after = Long.parseLong(spin[0]);
                long spinMillis = Long.parseLong(spin[1]);
                server.pipeline().addLast("loop-spinner", new LoopSpinner());
                Channel spun = server;
                duringFirstTransfer = () -> {
                    Thread t = new Thread(() -> {
                        try {
                            Thread.sleep(after);
                            spun.pipeline().fireUserEventTriggered(new LoopSpinner.Spin(spinMillis));
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }, "loop-spin-trigger");
                    t.setDaemon(true);
                    t.start();
                };
            }
            InetSocketAddress serverAddress = (InetSocketAddress) server.localAddress();
            InetSocketAddress target = serverAddress;
            if (a.containsKey("link")) {
                String[] l = a.get("link").split(",");
                long rate = Long.parseLong(l[0]);
                long delay = Long.parseLong(l[1]) * 1_000_000L;
                double bdp = Double.parseDouble(l[2]);
                double loss = Double.parseDouble(l[3]);
                long sizingRtt = Math.max(2 * delay, 1_000_000L); // DELAY_MS 0: the buffer as for a 1 ms round trip
                LinkProfile.Builder down = LinkProfile.builder().rate(rate).delay(delay).bufferBdp(bdp, sizingRtt).loss(loss);
                LinkProfile.Builder up = LinkProfile.builder().rate(rate).delay(delay).bufferBdp(bdp, sizingRtt);
                if (l.length > 4 && Long.parseLong(l[4]) > 0) {
                    down.jitter(Long.parseLong(l[4]) * 1_000_000L);
                }
                if (l.length > 5 && Long.parseLong(l[5]) > 0) {
                    up.bursty(Long.parseLong(l[5]) * 1_000_000L);
                }
                emulator = LinkEmulator.start(target, up.build(), down.build(), 7);
                target = emulator.address();
            }
            client = new Bootstrap().group(group).channel(NioDatagramChannel.class).handler(clientCodec())
                    .bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
            if (warmup > 0) {
                // a fast link that still shapes, so that pacing and the emulator's queue get compiled too
                LinkProfile fast = LinkProfile.builder().rate(WARMUP_RATE).delay(WARMUP_DELAY_NANOS)
                        .bufferBdp(2, 2 * WARMUP_DELAY_NANOS).build();
                try (LinkEmulator shaped = LinkEmulator.start(serverAddress, fast, fast, 1)) {
                    ok &= transfer("WARMUP", -1, client, shaped.address(), warmup, expectedCrc(warmup));
                    QuicheWindowProbe.stopAll();
                }
            }
            System.out.println("LISTENING " + serverAddress);
            System.out.flush();
            if (a.containsKey("start-after")) {
                awaitFile(Path.of(a.get("start-after"))); // the test attaches the agent, then creates the file
            }
            for (int i = 0; i < Integer.parseInt(a.getOrDefault("idle-connections", "0")); i++) {
                idleConnections.add(idleConnection(client, target));
            }
            long expected = expectedCrc(bytes);
            long until = System.nanoTime() + Long.parseLong(a.getOrDefault("seconds", "0")) * 1_000_000_000L;
            Path stepDir = a.containsKey("step-dir") ? Path.of(a.get("step-dir")) : null;
            for (int i = 0; i < connections || System.nanoTime() - until < 0; i++) {
                if (stepDir != null) {
                    System.out.println("READY " + i);
                    System.out.flush();
                    awaitFile(stepDir.resolve("go-" + i));
                }
                ok &= transfer("RESULT", i, client, target, bytes, expected);
                QuicheWindowProbe.stopAll(); // the download arrived: its server window is sampled to the end
            }
            Thread.sleep(Long.parseLong(a.getOrDefault("linger-ms", "0")));
            if (closeTimes != null) {
                // the server closes each connection after its draining period, a little after the client
                ok &= closeTimes.awaitAndWrite(Path.of(a.get("close-times")));
            }
            if (a.containsKey("exit-after")) {
                System.out.println("TRANSFERS DONE");
                System.out.flush();
                awaitFile(Path.of(a.get("exit-after")));
            }
        } catch (Throwable t) {
            ok = false;
            System.out.println("FAILED " + t);
            t.printStackTrace(System.out);
        } finally {
            for (QuicChannel idle : idleConnections) {
                idle.close().sync();
            }
            idleConnections.clear();
            if (client != null) {
                client.close().sync();
            }
            if (server != null) {
                server.close().sync();
            }
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS).sync();
            if (emulator != null) {
                System.out.println("EMULATOR toClient " + emulator.toClientStats());
                emulator.close();
            }
        }
        System.out.println("WRITES " + recorder.summary());
        System.out.printf(Locale.ROOT, "CPU cpuMs=%d wallMs=%d%n", (cpuNanos() - cpu0) / 1_000_000,
                (System.nanoTime() - wall0) / 1_000_000);
        // the agent's detector thread, as the JVM accounts its CPU (none without the agent or with detect=off)
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().equals("ccagent-detector")) {
                System.out.printf(Locale.ROOT, "THREAD ccagent-detector cpuMs=%.1f%n",
                        ManagementFactory.getThreadMXBean().getThreadCpuTime(t.getId()) / 1e6);
            }
        }
        System.out.println("DONE ok=" + ok);
        System.out.flush();
        return ok;
    }

    /** Prints {@code FAILED} with the stack trace; false. */
    static boolean failed(Throwable t) {
        System.out.println("FAILED " + t);
        t.printStackTrace(System.out);
        return false;
    }

    /** Prints {@code DONE ok=} and exits 0 when ok, else 1. */
    static void exit(boolean ok) {
        System.out.println("DONE ok=" + ok);
        System.out.flush();
        System.exit(ok ? 0 : 1);
    }

    /** key=value arguments as a map. */
    static java.util.Map<String, String> arguments(String[] args) {
        java.util.Map<String, String> a = new java.util.HashMap<>();
        for (String s : args) {
            int eq = s.indexOf('=');
            a.put(s.substring(0, eq), s.substring(eq + 1));
        }
        return a;
    }

    /** Closes {@code connections}, then {@code channels} (null ones skipped), then shuts {@code groups} down. */
    static void closeAll(java.util.List<QuicChannel> connections, Channel[] channels, EventLoopGroup... groups)
            throws InterruptedException {
        for (QuicChannel q : connections) {
            q.close().sync();
        }
        for (Channel ch : channels) {
            if (ch != null) {
                ch.close().sync();
            }
        }
        for (EventLoopGroup g : groups) {
            g.shutdownGracefully(0, 2, TimeUnit.SECONDS).sync();
        }
    }

    /** The server's TLS context from a PKCS#12 key store (the key's password is the store's). */
    static QuicSslContext serverSsl(Path keystore, char[] pass) throws Exception {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(keystore)) {
            ks.load(in, pass);
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, pass);
        return QuicSslContextBuilder.forServer(kmf, new String(pass)).applicationProtocols("bulk").build();
    }

    /** The server codec: each connection serves one download per stream (StreamInit), SERVED printed as it opens. */
    static QuicServerCodecBuilder serverCodec(QuicSslContext serverSsl) {
        return serverCodec(serverSsl, 15);
    }

    /** The same, closing a connection idle for {@code idleSeconds}. */
    static QuicServerCodecBuilder serverCodec(QuicSslContext serverSsl, long idleSeconds) {
        return new QuicServerCodecBuilder().sslContext(serverSsl)
                .maxIdleTimeout(idleSeconds, TimeUnit.SECONDS)
                .initialMaxData(32 << 20)
                .initialMaxStreamDataBidirectionalLocal(16 << 20)
                .initialMaxStreamDataBidirectionalRemote(16 << 20)
                .initialMaxStreamsBidirectional(16)
                .maxSendUdpPayloadSize(1350).maxRecvUdpPayloadSize(1350)
                .tokenHandler(InsecureQuicTokenHandler.INSTANCE)
                .handler(new Sharable())
                .streamHandler(new StreamInit());
    }

    /** The client codec (trusts any server certificate: 127.0.0.1 only). */
    static ChannelHandler clientCodec() {
        return clientCodec(15);
    }

    /** The same, closing a connection idle for {@code idleSeconds}. */
    static ChannelHandler clientCodec(long idleSeconds) {
        QuicSslContext clientSsl = QuicSslContextBuilder.forClient()
                .trustManager(InsecureTrustManagerFactory.INSTANCE).applicationProtocols("bulk").build();
        return new QuicClientCodecBuilder().sslContext(clientSsl)
                .maxIdleTimeout(idleSeconds, TimeUnit.SECONDS)
                .initialMaxData(32 << 20)
                .initialMaxStreamDataBidirectionalLocal(16 << 20)
                .initialMaxStreamDataBidirectionalRemote(16 << 20)
                .initialMaxStreamsBidirectional(16)
                .maxSendUdpPayloadSize(1350).maxRecvUdpPayloadSize(1350).build();
    }

    /** A client connection to {@code target} left open and idle (its id printed as {@code CLIENT id=HEX idle}). */
    static QuicChannel idleConnection(Channel client, InetSocketAddress target) throws Exception {
        QuicChannel idle = QuicChannel.newBootstrap(client).handler(new ChannelInboundHandlerAdapter())
                .remoteAddress(target).connect().get(10, TimeUnit.SECONDS);
        System.out.println("CLIENT id=" + QuicheWindowProbe.idOf(idle) + " idle");
        return idle;
    }

    private static void awaitFile(Path file) throws InterruptedException {
        long until = System.nanoTime() + 90_000_000_000L;
        while (!Files.exists(file)) {
            if (System.nanoTime() > until) {
                throw new IllegalStateException("no " + file + " within 90 s");
            }
            Thread.sleep(50);
        }
    }

    static boolean transfer(String label, int i, Channel client, InetSocketAddress target, long bytes,
                                    long expected) throws Exception {
        QuicChannel qc = QuicChannel.newBootstrap(client).handler(new ChannelInboundHandlerAdapter())
                .remoteAddress(target).connect().get(10, TimeUnit.SECONDS);
        try {
            if (label.equals("RESULT")) {
                System.out.println("CLIENT id=" + QuicheWindowProbe.idOf(qc) + " conn=" + i);
            }
            CompletableFuture<long[]> done = new CompletableFuture<>();
            long cpu0 = cpuNanos();
            long t0 = System.nanoTime();
            QuicStreamChannel st = qc.createStream(QuicStreamType.BIDIRECTIONAL, new Receiver(done)).sync().getNow();
            st.writeAndFlush(Unpooled.copyLong(bytes)).sync();
            Runnable during = duringFirstTransfer;
            if (during != null && label.equals("RESULT")) {
                duringFirstTransfer = null;
                during.run();
            }
            long[] r = done.get(90, TimeUnit.SECONDS);
            double secs = (System.nanoTime() - t0) / 1e9;
            boolean ok = r[0] == bytes && r[1] == expected;
            long cpuMs = (cpuNanos() - cpu0) / 1_000_000; // the whole process: server, client and emulator
            // the client's packet counts as quiche keeps them (its sent are the ACKs, its received the download)
            QuicConnectionStats stats = qc.collectStats().get(10, TimeUnit.SECONDS);
            System.out.printf(Locale.ROOT, "%s conn=%d bytes=%d crcOk=%b seconds=%.3f mbps=%.2f cpuMs=%d quicheSent=%d "
                    + "quicheRecv=%d%n", label, i, r[0], r[1] == expected, secs, r[0] * 8 / secs / 1e6, cpuMs, stats.sent(),
                    stats.recv());
            return ok;
        } finally {
            qc.close().sync();
        }
    }

    /** The 16 KiB pattern every download repeats (shared, not to be modified). */
    static byte[] pattern() {
        return PATTERN;
    }

    static long expectedCrc(long bytes) {
        CRC32 crc = new CRC32();
        for (long off = 0; off < bytes; off += PATTERN.length) {
            crc.update(PATTERN, 0, (int) Math.min(PATTERN.length, bytes - off));
        }
        return crc.getValue();
    }

    static long cpuNanos() {
        java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean) {
            return ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime();
        }
        return 0;
    }

    /** {@code close-times=FILE}: the server connections' close times (null: not timed). */
    static volatile CloseTimes closeTimes;

    /** {@code idle-connections}: open until the transfers end. */
    private static final java.util.List<QuicChannel> idleConnections = new java.util.ArrayList<>();

    @ChannelHandler.Sharable
    static final class Sharable extends ChannelInboundHandlerAdapter {
        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            System.out.println("SERVED id=" + QuicheWindowProbe.idOf((QuicChannel) ctx.channel()) + " thread="
                    + Thread.currentThread().getName());
            ctx.fireChannelActive();
        }

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            CloseTimes t = closeTimes;
            if (t != null) {
                // at registration, inside the codec's handling of the first packet: before anything that
                // handles the new channel after the codec returns it (an agent's close listener included)
                ctx.channel().closeFuture().addListener(t.first());
            }
        }
    }

    /**
     * What a server connection's close costs its event loop, timed by the application: a listener added
     * to the channel's close future at registration (before any other code can add one) reads the clock
     * and adds a second listener, which Netty's promise runs after every listener present when the close
     * was notified; the second reads the clock again. Between them run all close listeners that others
     * added in the channel's life. Each bracket is also a JFR event ({@code dev.ccagent.it.CloseBracket},
     * same thread, same span), so that a recording shows whose work lies inside it.
     */
    static final class CloseTimes {
        private final long[] nanos;
        private final String[] threads;
        private final java.util.concurrent.atomic.AtomicInteger next = new java.util.concurrent.atomic.AtomicInteger();
        private final java.util.concurrent.atomic.AtomicInteger count = new java.util.concurrent.atomic.AtomicInteger();
        private final java.util.concurrent.atomic.AtomicInteger outsideLoop = new java.util.concurrent.atomic.AtomicInteger();

        CloseTimes(int capacity) {
            nanos = new long[capacity];
            threads = new String[capacity];
        }

        io.netty.util.concurrent.GenericFutureListener<io.netty.util.concurrent.Future<? super Void>> first() {
            return f -> {
                long t0 = System.nanoTime();
                CloseBracket event = new CloseBracket();
                event.begin();
                io.netty.channel.ChannelFuture close = (io.netty.channel.ChannelFuture) f;
                if (!close.channel().eventLoop().inEventLoop()) {
                    outsideLoop.incrementAndGet();
                }
                close.addListener(g -> {
                    long t1 = System.nanoTime();
                    event.commit();
                    int i = next.getAndIncrement();
                    if (i < nanos.length) {
                        nanos[i] = t1 - t0;
                        threads[i] = Thread.currentThread().getName();
                        count.incrementAndGet(); // after the writes: the main thread reads up to count
                    }
                });
            };
        }

        /** Waits (at most 30 s) for every connection's close, then writes them; false when some are missing. */
        boolean awaitAndWrite(Path file) throws Exception {
            long until = System.nanoTime() + 30_000_000_000L;
            while (count.get() < nanos.length && System.nanoTime() < until) {
                Thread.sleep(20);
            }
            int n = Math.min(count.get(), nanos.length);
            StringBuilder sb = new StringBuilder("# close,nanos,thread\n");
            for (int i = 0; i < n; i++) {
                sb.append(i).append(',').append(nanos[i]).append(',').append(threads[i]).append('\n');
            }
            Files.writeString(file, sb);
            System.out.printf(Locale.ROOT, "CLOSES timed=%d of %d outsideLoop=%d%n", n, nanos.length, outsideLoop.get());
            return n == nanos.length && outsideLoop.get() == 0;
        }
    }

    /** The JFR event of one timed close (see {@link CloseTimes}). */
    @jdk.jfr.Name("dev.ccagent.it.CloseBracket")
    @jdk.jfr.Label("Close bracket")
    @jdk.jfr.StackTrace(false)
    static final class CloseBracket extends jdk.jfr.Event {
    }

    /** A fresh writer per server stream (handlers given to the builder are shared). */
    @ChannelHandler.Sharable
    static final class StreamInit extends ChannelInitializer<QuicStreamChannel> {
        @Override
        protected void initChannel(QuicStreamChannel ch) {
            ch.pipeline().addLast(new Sender());
        }
    }

    /** Server side of a stream: reads the length, writes that many pattern bytes, then shuts output down. */
    static final class Sender extends ChannelInboundHandlerAdapter {
        private long remaining = -1;
        private long offset;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf b = (ByteBuf) msg;
            try {
                if (remaining < 0 && b.readableBytes() >= 8) {
                    remaining = b.readLong();
                    QuicheWindowProbe.start((QuicChannel) ctx.channel().parent(),
                            "conn=" + SERVED.getAndIncrement(), probeMillis);
                    pump(ctx);
                }
            } finally {
                b.release();
            }
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            if (ctx.channel().isWritable()) {
                pump(ctx);
            }
            ctx.fireChannelWritabilityChanged();
        }

        private void pump(ChannelHandlerContext ctx) {
            if (remaining <= 0) {
                return;
            }
            io.netty.channel.ChannelFuture last = null;
            while (remaining > 0 && ctx.channel().isWritable()) {
                int start = (int) (offset % PATTERN.length);
                int n = (int) Math.min(PATTERN.length - start, remaining);
                last = ctx.write(Unpooled.wrappedBuffer(PATTERN, start, n));
                last.addListener(f -> {
                    if (!f.isSuccess()) {
                        System.out.println("WRITE FAILED " + f.cause());
                    }
                });
                remaining -= n;
                offset += n;
            }
            ctx.flush();
            if (remaining == 0 && last != null) {
                // FIN only once the last chunk is in quiche's stream buffer: shutting down output
                // while writes are still queued in the stream channel can overtake them
                last.addListener(f -> ((QuicStreamChannel) ctx.channel()).shutdownOutput());

            }
        }
    }

    /** Client side: CRC over everything received until the server's FIN. */
    static final class Receiver extends ChannelInboundHandlerAdapter {
        private final CompletableFuture<long[]> done;
        private final CRC32 crc = new CRC32();
        private long got;

        Receiver(CompletableFuture<long[]> done) {
            this.done = done;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf b = (ByteBuf) msg;
            got += b.readableBytes();
            crc.update(b.nioBuffer());
            b.release();
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof ChannelInputShutdownReadComplete) {
                done.complete(new long[] {got, crc.getValue()});
            }
            ctx.fireUserEventTriggered(evt);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            done.complete(new long[] {got, crc.getValue()});
            ctx.fireChannelInactive();
        }
    }

    /**
     * Times of datagram writes at the server socket: how bursty they are (the largest number of
     * datagrams in any 1 ms, and the share of gaps under 20 µs: back-to-back).
     */
    @ChannelHandler.Sharable
    static final class WriteRecorder extends ChannelDuplexHandler {
        /** More datagrams than this in one millisecond is a burst (16 × 1350 B/ms ≈ 173 Mbit/s). */
        static final int BURST = 16;
        private long count;
        private long lastNanos;
        private long backToBack;
        private long bucket = -1;
        private int inBucket;
        private int maxPerMs;
        private long inBursts;

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            if (msg instanceof DatagramPacket && ((DatagramPacket) msg).content().readableBytes() > 0) {
                long now = System.nanoTime();
                if (count > 0 && now - lastNanos < 20_000) {
                    backToBack++;
                }
                long b = now / 1_000_000;
                if (b != bucket) {
                    close();
                    bucket = b;
                }
                inBucket++;
                count++;
                lastNanos = now;
            }
            ctx.write(msg, promise);
        }

        private void close() {
            maxPerMs = Math.max(maxPerMs, inBucket);
            if (inBucket > BURST) {
                inBursts += inBucket;
            }
            inBucket = 0;
        }

        String summary() {
            close();
            return String.format(Locale.ROOT, "datagrams=%d maxPerMs=%d inBurstsPct=%.1f backToBackPct=%.1f", count,
                    maxPerMs, count > 0 ? 100.0 * inBursts / count : 0.0,
                    count > 1 ? 100.0 * backToBack / (count - 1) : 0.0);
        }
    }

    static String join(long[] v) {
        return Arrays.toString(v);
    }
}
