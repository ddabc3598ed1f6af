package dev.ccagent.it.netty;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.quic.QuicChannel;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A busy event loop that is no spin: one event loop serves a QUIC server with {@code idle} open, idle
 * connections and a TCP echo server kept busy by {@code tcp-clients} blocking clients (each writes 8 KiB
 * and reads its echo, over and over) for {@code seconds}. The QUIC clients run on their own NIO loop.
 * {@code transport=nio|epoll} chooses the server loop's transport. Prints {@code CPU loopCpuMs= wallMs=}
 * (the server loop's CPU over the load, as the JVM counts it), {@code TCP echoedBytes=},
 * {@code QUIC active=N of M} (the idle connections still open at the end) and {@code DONE ok=}.
 */
public final class NettyBusyLoopApp {

    private NettyBusyLoopApp() {
    }

    @ChannelHandler.Sharable
    static final class Echo extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ctx.write(msg);
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
        }
    }

    @SuppressWarnings("deprecation")
    public static void main(String[] args) throws Exception {
        java.util.Map<String, String> a = NettyBulkApp.arguments(args);
        boolean epoll = "epoll".equals(a.getOrDefault("transport", "nio"));
        int idleCount = Integer.parseInt(a.getOrDefault("idle", "100"));
        long seconds = Long.parseLong(a.getOrDefault("seconds", "60"));
        int tcpClients = Integer.parseInt(a.getOrDefault("tcp-clients", "4"));
        char[] pass = a.getOrDefault("storepass", "changeit").toCharArray();
        EventLoopGroup serverLoop = epoll ? new io.netty.channel.epoll.EpollEventLoopGroup(1) : new NioEventLoopGroup(1);
        EventLoopGroup clientLoop = new NioEventLoopGroup(1);
        List<QuicChannel> idle = new ArrayList<>();
        List<Thread> load = new ArrayList<>();
        AtomicLong echoed = new AtomicLong();
        boolean ok = true;
        Channel quicServer = null;
        Channel tcpServer = null;
        Channel client = null;
        try {
            quicServer = new Bootstrap().group(serverLoop)
                    .channel(epoll ? io.netty.channel.epoll.EpollDatagramChannel.class : NioDatagramChannel.class)
                    .handler(NettyBulkApp.serverCodec(NettyBulkApp.serverSsl(Path.of(a.get("keystore")), pass), seconds + 60).build())
                    .bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
            tcpServer = new ServerBootstrap().group(serverLoop, serverLoop)
                    .channel(epoll ? io.netty.channel.epoll.EpollServerSocketChannel.class : NioServerSocketChannel.class)
                    .childHandler(new ChannelInitializer<Channel>() {
                        @Override
                        protected void initChannel(Channel ch) {
                            ch.pipeline().addLast(new Echo());
                        }
                    })
                    .bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
            InetSocketAddress quicAddress = (InetSocketAddress) quicServer.localAddress();
            InetSocketAddress tcpAddress = (InetSocketAddress) tcpServer.localAddress();
            client = new Bootstrap().group(clientLoop).channel(NioDatagramChannel.class)
                    .handler(NettyBulkApp.clientCodec(seconds + 60))
                    .bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
            for (int i = 0; i < idleCount; i++) {
                idle.add(QuicChannel.newBootstrap(client).handler(new ChannelInboundHandlerAdapter())
                        .remoteAddress(quicAddress).connect().get(10, TimeUnit.SECONDS));
            }
            System.out.println("QUIC idle connections open: " + idle.size());
            Thread loopThread = serverLoop.next().submit(Thread::currentThread).get();
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            for (int i = 0; i < tcpClients; i++) {
                Thread t = new Thread(() -> echoUntil(tcpAddress, until, echoed), "tcp-load-" + i);
                t.start();
                load.add(t);
            }
            java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
            long cpu0 = mx.getThreadCpuTime(loopThread.getId());
            long wall0 = System.nanoTime();
            for (Thread t : load) {
                t.join();
            }
            long cpuMs = (mx.getThreadCpuTime(loopThread.getId()) - cpu0) / 1_000_000;
            long wallMs = (System.nanoTime() - wall0) / 1_000_000;
            System.out.printf(Locale.ROOT, "CPU loopCpuMs=%d wallMs=%d loop=%s transport=%s%n", cpuMs, wallMs,
                    loopThread.getName(), epoll ? "epoll" : "nio");
            System.out.println("TCP echoedBytes=" + echoed.get());
            long active = idle.stream().filter(QuicChannel::isActive).count();
            System.out.println("QUIC active=" + active + " of " + idle.size());
            ok = active == idle.size() && echoed.get() > 0;
        } catch (Throwable t) {
            ok = NettyBulkApp.failed(t);
        } finally {
            NettyBulkApp.closeAll(idle, new Channel[] {client, quicServer, tcpServer}, clientLoop, serverLoop);
        }
        NettyBulkApp.exit(ok);
    }

    /** One blocking client: 8 KiB out, its echo back, until {@code until}. */
    private static void echoUntil(InetSocketAddress server, long until, AtomicLong echoed) {
        byte[] out = new byte[8192];
        byte[] in = new byte[8192];
        try (Socket s = new Socket()) {
            s.setTcpNoDelay(true);
            s.connect(server);
            OutputStream o = s.getOutputStream();
            InputStream i = s.getInputStream();
            while (System.nanoTime() < until) {
                o.write(out);
                int got = 0;
                while (got < out.length) {
                    int n = i.read(in, 0, out.length - got);
                    if (n < 0) {
                        throw new java.io.EOFException("echo server closed");
                    }
                    got += n;
                }
                echoed.addAndGet(got);
            }
        } catch (java.io.IOException e) {
            System.out.println("TCP client failed: " + e);
        }
    }
}
