package dev.ccagent.it.netty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.Http3SslContextSpec;
import reactor.netty.http.HttpProtocol;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.resources.LoopResources;

import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.BiFunction;
import java.util.zip.CRC32;

/**
 * One Reactor Netty application serving HTTP/1.1 (TCP) and HTTP/3 (QUIC) at once, both servers on the same
 * {@link LoopResources} ({@code loops} event loops, 1 by default: one loop carries both protocols), under load
 * from clients in the same JVM for {@code seconds} (the forked target of {@code ReactorHttp1AndHttp3NoFalseAlarmTest}).
 *
 * <p>HTTP/1.1: {@code h1-clients} threads, each a client on one kept-alive socket fetching {@code h1-bytes}
 * over and over, {@code h1-depth} requests in flight (pipelined). HTTP/3: {@code h3-clients} Reactor Netty clients (their own event loop, one
 * pooled QUIC connection each) in cycles of {@code heavy-seconds} of back-to-back {@code h3-bytes} downloads
 * and {@code light-seconds} of one {@code h3-light-bytes} request every {@code light-pause-ms}: the heavy part
 * moves megabytes over QUIC, the light part leaves the loop busy with HTTP/1.1 while its QUIC connections are
 * nearly still. Every response is the pattern bytes, checked by CRC at the client.
 *
 * <p>Prints one {@code LOOP id= name= cpuMs= wallMs= h1Requests= h3Requests=} line per server event loop (its
 * CPU over the load as the JVM counts it, and the requests of each protocol it served), {@code PROCESS cpuMs=
 * wallMs=} (the whole JVM's), {@code WINDOWS} (the loop's CPU in 2 s windows: {@link WindowCounts}), {@code THREADS}
 * (the live threads with most CPU), {@code H1 requests=
 * bytes= crcFailures=}, {@code H3 requests= bytes= heavyBytes= lightRequests= crcFailures= connections=}
 * (connections: the QUIC connections the server saw) and {@code DONE ok=}.
 */
public final class ReactorHttp1AndHttp3LoadApp {

    private static final String LOOP_PREFIX = "h1h3";
    /** The CPU spin monitor's window: 2 s. */
    static final long WINDOW_MILLIS = 2000;

    /** Per server loop thread: requests served over HTTP/1.1 and over HTTP/3. */
    private static final Map<Thread, AtomicLongArray> SERVED_BY = new ConcurrentHashMap<>();
    /** The QUIC connections HTTP/3 requests came on (the stream channels' parents). */
    private static final Set<Object> QUIC_CONNECTIONS = ConcurrentHashMap.newKeySet();

    private ReactorHttp1AndHttp3LoadApp() {
    }

    /**
     * The shared loop's CPU in windows of {@value #WINDOW_MILLIS} ms from the start of the load, as the JVM counts
     * it: per kind of window (within a heavy part, within a light part, across both), how many and how many with
     * the loop at half a core or more (the CPU spin monitor's threshold). Written by the sampler thread, printed
     * after it ends.
     */
    static final class WindowCounts {
        int light;
        int lightBusy;
        int heavy;
        int heavyBusy;
        int mixed;
        double lightMaxShare;
        double lightMinShare = Double.MAX_VALUE;

        void sample(ThreadMXBean mx, Thread loop, long start, long until, long heavyNanos, long lightNanos) {
            if (loop == null) {
                return;
            }
            long cpu = mx.getThreadCpuTime(loop.getId());
            long from = start;
            try {
                for (long to = start + WINDOW_MILLIS * 1_000_000L; to <= until; to += WINDOW_MILLIS * 1_000_000L) {
                    long wait = to - System.nanoTime();
                    if (wait > 0) {
                        TimeUnit.NANOSECONDS.sleep(wait);
                    }
                    long now = System.nanoTime();
                    long cpuNow = mx.getThreadCpuTime(loop.getId());
                    double share = (cpuNow - cpu) / (double) (now - from);
                    boolean heavyAtStart = (from - start) % (heavyNanos + lightNanos) < heavyNanos;
                    boolean heavyAtEnd = (now - 1 - start) % (heavyNanos + lightNanos) < heavyNanos;
                    boolean sameCycle = (from - start) / (heavyNanos + lightNanos) == (now - 1 - start) / (heavyNanos + lightNanos);
                    if (heavyAtStart != heavyAtEnd || !sameCycle) {
                        mixed++;
                    } else if (heavyAtStart) {
                        heavy++;
                        heavyBusy += share >= 0.5 ? 1 : 0;
                    } else {
                        light++;
                        lightBusy += share >= 0.5 ? 1 : 0;
                        lightMaxShare = Math.max(lightMaxShare, share);
                        lightMinShare = Math.min(lightMinShare, share);
                    }
                    cpu = cpuNow;
                    from = now;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public String toString() {
            return String.format(Locale.ROOT, "WINDOWS of %d ms: light=%d lightBusy=%d heavy=%d heavyBusy=%d mixed=%d "
                            + "lightShare=%.2f-%.2f", WINDOW_MILLIS, light, lightBusy, heavy, heavyBusy, mixed,
                    light > 0 ? lightMinShare : 0, lightMaxShare);
        }
    }

    /** What the clients of one protocol moved. */
    static final class Tally {
        final AtomicLong requests = new AtomicLong();
        final AtomicLong bytes = new AtomicLong();
        final AtomicLong heavyBytes = new AtomicLong();
        final AtomicLong lightRequests = new AtomicLong();
        final AtomicLong crcFailures = new AtomicLong();
        volatile Throwable failure;
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> a = FrameworkApp.arguments(args);
        long seconds = Long.parseLong(a.getOrDefault("seconds", "60"));
        int loopCount = Integer.parseInt(a.getOrDefault("loops", "1"));
        int h1Clients = Integer.parseInt(a.getOrDefault("h1-clients", "1"));
        int h1Bytes = Integer.parseInt(a.getOrDefault("h1-bytes", "8192"));
        int h1Depth = Integer.parseInt(a.getOrDefault("h1-depth", "8"));
        int h3Clients = Integer.parseInt(a.getOrDefault("h3-clients", "2"));
        long h3Bytes = Long.parseLong(a.getOrDefault("h3-bytes", "1048576"));
        long h3LightBytes = Long.parseLong(a.getOrDefault("h3-light-bytes", "1024"));
        long heavyNanos = TimeUnit.SECONDS.toNanos(Long.parseLong(a.getOrDefault("heavy-seconds", "5")));
        long lightNanos = TimeUnit.SECONDS.toNanos(Long.parseLong(a.getOrDefault("light-seconds", "10")));
        long lightPauseMs = Long.parseLong(a.getOrDefault("light-pause-ms", "1000"));

        FrameworkApp.ServerKey serverKey = FrameworkApp.serverKey(a.get("keystore"));
        PrivateKey key = serverKey.key();
        X509Certificate cert = serverKey.certificate();

        LoopResources serverLoops = LoopResources.create(LOOP_PREFIX, loopCount, true);
        LoopResources clientLoops = LoopResources.create("h3-client", 1, true);
        Tally h1 = new Tally();
        Tally h3 = new Tally();
        boolean ok;
        DisposableServer h3Server = null;
        DisposableServer h1Server = null;
        List<ConnectionProvider> pools = new ArrayList<>();
        try {
            h3Server = HttpServer.create()
                    .host("127.0.0.1").port(0)
                    .runOn(serverLoops)
                    .protocol(HttpProtocol.HTTP3)
                    .secure(spec -> spec.sslContext(Http3SslContextSpec.forServer(key, null, cert)))
                    .http3Settings(spec -> spec.idleTimeout(Duration.ofSeconds(seconds + 60)).maxData(64 << 20)
                            .maxStreamDataBidirectionalLocal(32 << 20).maxStreamDataBidirectionalRemote(32 << 20)
                            .maxStreamsBidirectional(100))
                    .handle(serve(1))
                    .bindNow(Duration.ofSeconds(20));
            h1Server = HttpServer.create()
                    .host("127.0.0.1").port(0)
                    .runOn(serverLoops)
                    .protocol(HttpProtocol.HTTP11)
                    .handle(serve(0))
                    .bindNow(Duration.ofSeconds(20));
            InetSocketAddress h3Address = (InetSocketAddress) h3Server.address();
            InetSocketAddress h1Address = (InetSocketAddress) h1Server.address();
            System.out.println("LISTENING http/3 " + h3Address + " http/1.1 " + h1Server.address());

            List<Thread> loopThreads = new ArrayList<>();
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                if (t.getName().startsWith(LOOP_PREFIX + "-")) {
                    loopThreads.add(t);
                }
            }
            ThreadMXBean mx = ManagementFactory.getThreadMXBean();
            long[] cpu0 = new long[loopThreads.size()];
            for (int i = 0; i < cpu0.length; i++) {
                cpu0[i] = mx.getThreadCpuTime(loopThreads.get(i).getId());
            }
            long processCpu0 = NettyBulkApp.cpuNanos();
            long start = System.nanoTime();
            long until = start + TimeUnit.SECONDS.toNanos(seconds);
            List<Thread> load = new ArrayList<>();
            long h1Crc = NettyBulkApp.expectedCrc(h1Bytes);
            for (int i = 0; i < h1Clients; i++) {
                Thread t = new Thread(() -> fetchOverHttp1Until(h1Address, "/bytes?n=" + h1Bytes, h1Bytes, h1Crc, h1Depth, until, h1), "h1-client-" + i);
                t.start();
                load.add(t);
            }
            long h3Crc = NettyBulkApp.expectedCrc(h3Bytes);
            long h3LightCrc = NettyBulkApp.expectedCrc(h3LightBytes);
            for (int i = 0; i < h3Clients; i++) {
                ConnectionProvider pool = ConnectionProvider.create("h3-client-" + i, 1);
                pools.add(pool);
                HttpClient client = HttpClient.create(pool)
                        .runOn(clientLoops)
                        .protocol(HttpProtocol.HTTP3)
                        .secure(spec -> spec.sslContext(Http3SslContextSpec.forClient()
                                .configure(b -> b.trustManager(InsecureTrustManagerFactory.INSTANCE))))
                        .http3Settings(spec -> spec.idleTimeout(Duration.ofSeconds(seconds + 60)).maxData(64 << 20)
                                .maxStreamDataBidirectionalLocal(32 << 20).maxStreamDataBidirectionalRemote(32 << 20)
                                .maxStreamsBidirectional(100))
                        .remoteAddress(() -> h3Address);
                Thread t = new Thread(() -> {
                    try {
                        while (System.nanoTime() < until) {
                            boolean heavy = (System.nanoTime() - start) % (heavyNanos + lightNanos) < heavyNanos;
                            if (heavy) {
                                h3.heavyBytes.addAndGet(fetchOverHttp3(client, h3Bytes, h3Crc, h3));
                            } else {
                                fetchOverHttp3(client, h3LightBytes, h3LightCrc, h3);
                                h3.lightRequests.incrementAndGet();
                                Thread.sleep(lightPauseMs);
                            }
                        }
                    } catch (Throwable e) {
                        h3.failure = e;
                    }
                }, "h3-client-" + i);
                t.start();
                load.add(t);
            }
            Thread sharedLoop = loopThreads.size() == 1 ? loopThreads.get(0) : null;
            WindowCounts windows = new WindowCounts();
            Thread sampler = new Thread(() -> windows.sample(mx, sharedLoop, start, until, heavyNanos, lightNanos),
                    "loop-cpu-windows");
            sampler.setDaemon(true);
            sampler.start();
            for (Thread t : load) {
                t.join();
            }
            sampler.join(5000);
            long wallMs = (System.nanoTime() - start) / 1_000_000;
            for (int i = 0; i < cpu0.length; i++) {
                Thread t = loopThreads.get(i);
                AtomicLongArray served = SERVED_BY.getOrDefault(t, new AtomicLongArray(2));
                System.out.printf(Locale.ROOT, "LOOP id=%d name=%s cpuMs=%d wallMs=%d h1Requests=%d h3Requests=%d%n",
                        t.getId(), t.getName(), (mx.getThreadCpuTime(t.getId()) - cpu0[i]) / 1_000_000, wallMs,
                        served.get(0), served.get(1));
            }
            System.out.println(windows);
            System.out.printf(Locale.ROOT, "PROCESS cpuMs=%d wallMs=%d%n",
                    (NettyBulkApp.cpuNanos() - processCpu0) / 1_000_000, wallMs);
            StringBuilder busiest = new StringBuilder("THREADS by CPU:");
            Thread.getAllStackTraces().keySet().stream()
                    .sorted((x, y) -> Long.compare(mx.getThreadCpuTime(y.getId()), mx.getThreadCpuTime(x.getId())))
                    .limit(8).forEach(t -> busiest.append(' ').append(t.getName()).append('=')
                            .append(mx.getThreadCpuTime(t.getId()) / 1_000_000).append("ms"));
            System.out.println(busiest);
            System.out.printf(Locale.ROOT, "H1 requests=%d bytes=%d crcFailures=%d%n", h1.requests.get(), h1.bytes.get(),
                    h1.crcFailures.get());
            System.out.printf(Locale.ROOT, "H3 requests=%d bytes=%d heavyBytes=%d lightRequests=%d crcFailures=%d "
                            + "connections=%d%n", h3.requests.get(), h3.bytes.get(), h3.heavyBytes.get(),
                    h3.lightRequests.get(), h3.crcFailures.get(), QUIC_CONNECTIONS.size());
            for (Tally t : List.of(h1, h3)) {
                if (t.failure != null) {
                    FrameworkApp.printFailure(t.failure);
                }
            }
            ok = h1.failure == null && h3.failure == null && h1.crcFailures.get() == 0 && h3.crcFailures.get() == 0
                    && h1.bytes.get() > 0 && h3.heavyBytes.get() > 0 && h3.lightRequests.get() > 0;
        } catch (Throwable t) {
            ok = false;
            FrameworkApp.printFailure(t);
        } finally {
            for (ConnectionProvider pool : pools) {
                pool.disposeLater().block(Duration.ofSeconds(10));
            }
            if (h1Server != null) {
                h1Server.disposeNow(Duration.ofSeconds(10));
            }
            if (h3Server != null) {
                h3Server.disposeNow(Duration.ofSeconds(10));
            }
            clientLoops.disposeLater().block(Duration.ofSeconds(10));
            serverLoops.disposeLater().block(Duration.ofSeconds(10));
        }
        FrameworkApp.exit(ok);
    }

    /** The handler of both servers: {@code n} pattern bytes for {@code /bytes?n=N}; counts who served it. */
    private static BiFunction<HttpServerRequest, HttpServerResponse, Publisher<Void>> serve(int protocol) {
        return (req, res) -> {
            SERVED_BY.computeIfAbsent(Thread.currentThread(), t -> new AtomicLongArray(2)).incrementAndGet(protocol);
            if (protocol == 1) {
                req.withConnection(c -> QUIC_CONNECTIONS.add(c.channel().parent()));
            }
            long n = Long.parseLong(req.uri().substring(req.uri().indexOf("n=") + 2));
            return res.header("content-length", Long.toString(n)).send(ReactorHttp3App.chunks(n)).then();
        };
    }

    /**
     * One HTTP/1.1 client on one kept-alive socket: GET {@code path} with {@code depth} requests in flight
     * (pipelined: one more is sent as each response is read), each response read (status line, headers,
     * {@code content-length} bytes) and CRC checked, until {@code until}. A plain socket rather than the JDK's
     * clients, so that the clients' CPU per request stays well below the server's, and pipelined so that the
     * server's loop never waits for a client to ask again.
     */
    private static void fetchOverHttp1Until(InetSocketAddress server, String path, int bytes, long expectedCrc,
                                            int depth, long until, Tally tally) {
        byte[] request = ("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
        byte[] buf = new byte[16384];
        try (Socket s = new Socket()) {
            s.setTcpNoDelay(true);
            s.connect(server);
            OutputStream out = s.getOutputStream();
            InputStream in = new BufferedInputStream(s.getInputStream(), 65536);
            for (int i = 0; i < depth; i++) {
                out.write(request);
            }
            int inFlight = depth;
            while (inFlight > 0) {
                String status = headerLine(in);
                long length = -1;
                for (String h = headerLine(in); !h.isEmpty(); h = headerLine(in)) {
                    if (h.regionMatches(true, 0, "content-length:", 0, 15)) {
                        length = Long.parseLong(h.substring(15).trim());
                    }
                }
                CRC32 crc = new CRC32();
                long got = 0;
                while (got < length) {
                    int r = in.read(buf, 0, (int) Math.min(buf.length, length - got));
                    if (r < 0) {
                        throw new EOFException("HTTP/1.1 server closed after " + got + " of " + length + " B");
                    }
                    crc.update(buf, 0, r);
                    got += r;
                }
                inFlight--;
                tally.requests.incrementAndGet();
                tally.bytes.addAndGet(got);
                if (!status.startsWith("HTTP/1.1 200") || got != bytes || crc.getValue() != expectedCrc) {
                    tally.crcFailures.incrementAndGet();
                }
                if (System.nanoTime() < until) {
                    out.write(request);
                    inFlight++;
                }
            }
        } catch (IOException e) {
            tally.failure = e;
        }
    }

    /** One CRLF-terminated line of a response head, without its CRLF. */
    private static String headerLine(InputStream in) throws IOException {
        StringBuilder line = new StringBuilder();
        for (int c = in.read(); c != '\n'; c = in.read()) {
            if (c < 0) {
                throw new EOFException("HTTP/1.1 server closed in a response head");
            }
            if (c != '\r') {
                line.append((char) c);
            }
        }
        return line.toString();
    }

    /** One HTTP/3 GET of {@code bytes} on {@code client}'s pooled connection, CRC checked; the bytes received. */
    private static long fetchOverHttp3(HttpClient client, long bytes, long expectedCrc, Tally tally) {
        CRC32 crc = new CRC32();
        long[] got = new long[1];
        Integer status = client.get().uri("/bytes?n=" + bytes)
                .response((res, body) -> body.doOnNext(b -> {
                    got[0] += b.readableBytes();
                    crc.update(b.nioBuffer());
                }).then(Mono.just(res.status().code())))
                .next()
                .block(Duration.ofSeconds(60));
        tally.requests.incrementAndGet();
        tally.bytes.addAndGet(got[0]);
        if (status == null || status != 200 || got[0] != bytes || crc.getValue() != expectedCrc) {
            tally.crcFailures.incrementAndGet();
        }
        return got[0];
    }
}
