package dev.ccagent.it.netty;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.handler.codec.quic.QuicChannel;

import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A released Netty's own event-loop spin on a loop that serves QUIC connections: CVE-2026-42577
 * (GHSA-rwm7-x88c-3g2p, netty-transport-native-epoll 4.2.0-4.2.12, fixed in 4.2.13 by netty/netty#16689).
 * One epoll event loop serves a QUIC server (Netty QUIC on an {@code EpollDatagramChannel}) and a TCP
 * server whose connections allow half-closure and are not closed when their input ends. A TCP client
 * half-closes its connection ({@code shutdownOutput}) and then resets it (linger 0): on an affected
 * Netty the reset socket stays registered with an empty interest set, the kernel reports
 * {@code EPOLLERR|EPOLLHUP} for it on every wait, and the loop spins through {@code epoll_wait} at a
 * full core while it still runs its tasks. Two QUIC clients (on their own NIO loop) stay connected and
 * idle through it; after the hold the application closes the stale TCP channel (the spin ends) and
 * downloads over QUIC (checksummed).
 *
 * <p>Arguments (key=value): {@code keystore=PATH}, {@code storepass=PASSWORD}, {@code hold-ms=N} (how long the
 * stale channel is left, default 6000), {@code bytes=N} (the download after). Prints {@code SERVED} (each
 * server connection and its loop), {@code CLIENT}, {@code TRIGGER epochMs=}, {@code STALE CLOSED epochMs= n=},
 * {@code RESULT}, {@code CPU loopCpuMs= wallMs=} (the loop's CPU over the hold) and {@code DONE ok=}.
 */
public final class NettyEpollHalfCloseApp {

    private NettyEpollHalfCloseApp() {
    }

    public static void main(String[] args) throws Exception {
        java.util.Map<String, String> a = NettyBulkApp.arguments(args);
        long holdMs = Long.parseLong(a.getOrDefault("hold-ms", "6000"));
        long bytes = Long.parseLong(a.getOrDefault("bytes", "2000000"));
        char[] pass = a.getOrDefault("storepass", "changeit").toCharArray();
        List<Channel> tcpChildren = new CopyOnWriteArrayList<>();
        boolean ok = true;
        @SuppressWarnings("deprecation")
        EventLoopGroup serverLoop = new EpollEventLoopGroup(1);
        @SuppressWarnings("deprecation")
        EventLoopGroup clientLoop = new NioEventLoopGroup(1);
        Channel quicServer = null;
        Channel tcpServer = null;
        Channel client = null;
        List<QuicChannel> idle = new java.util.ArrayList<>();
        try {
            quicServer = new Bootstrap().group(serverLoop).channel(EpollDatagramChannel.class)
                    .handler(NettyBulkApp.serverCodec(NettyBulkApp.serverSsl(Path.of(a.get("keystore")), pass)).build())
                    .bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
            tcpServer = new ServerBootstrap().group(serverLoop, serverLoop).channel(EpollServerSocketChannel.class)
                    .childOption(ChannelOption.ALLOW_HALF_CLOSURE, true)
                    .childHandler(new ChannelInitializer<Channel>() {
                        @Override
                        protected void initChannel(Channel ch) {
                            tcpChildren.add(ch);
                            ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                                @Override
                                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                    ((ByteBuf) msg).release();
                                }

                                @Override
                                public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                                    System.out.println("TCP exception " + cause); // left open, as the application wrote it
                                }
                            });
                        }
                    })
                    .bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
            InetSocketAddress quicAddress = (InetSocketAddress) quicServer.localAddress();
            client = new Bootstrap().group(clientLoop).channel(NioDatagramChannel.class).handler(NettyBulkApp.clientCodec())
                    .bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
            for (int i = 0; i < 2; i++) {
                idle.add(NettyBulkApp.idleConnection(client, quicAddress));
            }
            Thread loopThread = serverLoop.next().submit(Thread::currentThread).get();
            java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
            Thread.sleep(500);

            // the trigger: half-close, then reset
            try (Socket s = new Socket()) {
                s.connect((InetSocketAddress) tcpServer.localAddress());
                Thread.sleep(100);
                s.shutdownOutput();
                Thread.sleep(300);
                s.setSoLinger(true, 0);
            }
            System.out.println("TRIGGER epochMs=" + System.currentTimeMillis()); // the reset is sent
            long cpu0 = mx.getThreadCpuTime(loopThread.getId());
            long wall0 = System.nanoTime();
            Thread.sleep(holdMs);
            long cpuMs = (mx.getThreadCpuTime(loopThread.getId()) - cpu0) / 1_000_000;
            long wallMs = (System.nanoTime() - wall0) / 1_000_000;
            System.out.printf(Locale.ROOT, "CPU loopCpuMs=%d wallMs=%d loop=%s%n", cpuMs, wallMs, loopThread.getName());
            for (Channel ch : tcpChildren) {
                ch.close().sync();
            }
            System.out.println("STALE CLOSED epochMs=" + System.currentTimeMillis() + " n=" + tcpChildren.size());
            Thread.sleep(3000); // the monitor sees the loop idle again
            ok &= NettyBulkApp.transfer("RESULT", 0, client, quicAddress, bytes, NettyBulkApp.expectedCrc(bytes));
        } catch (Throwable t) {
            ok = NettyBulkApp.failed(t);
        } finally {
            NettyBulkApp.closeAll(idle, new Channel[] {client, quicServer, tcpServer}, clientLoop, serverLoop);
        }
        NettyBulkApp.exit(ok);
    }
}
