package dev.ccagent.agent.netty;

import dev.ccagent.agent.config.AgentArgs;
import dev.ccagent.agent.runtime.AgentRuntime;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.DatagramPacket;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.util.ResourceLeakDetector;
import io.netty.channel.DefaultEventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Netty pacer's bounds, against real Netty channels (EmbeddedChannel, and a real NIO event loop
 * for the shutdown case), with send times fed through the same hook quiche's send loop uses
 * ({@link NettyHooks#onSendInfo} with a {@code quiche_send_info}-shaped buffer). Reference counts are
 * checked on every datagram; Netty's leak detector runs PARANOID.
 */
class NettyPacerTest {

    static final InetSocketAddress PEER = new InetSocketAddress("127.0.0.1", 9);
    private ResourceLeakDetector.Level leakLevel;

    @BeforeEach
    void pacingOn() {
        leakLevel = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
        AgentRuntime.setConfig(AgentArgs.parse("netty.pacing=on;netty.stats.period=off;log=off").config());
    }

    @AfterEach
    void reset() {
        NettyPacingHooks.endSendLoop();
        AgentRuntime.setConfig(null);
        ResourceLeakDetector.setLevel(leakLevel);
    }

    /** A quiche_send_info as Netty's buffer holds it: {@code at} (CLOCK_MONOTONIC) at offsets 272/280. */
    static ByteBuffer sendInfo(long at) {
        ByteBuffer b = ByteBuffer.allocateDirect(288).order(ByteOrder.nativeOrder());
        b.putLong(272, Math.floorDiv(at, 1_000_000_000L));
        b.putLong(280, Math.floorMod(at, 1_000_000_000L));
        return b;
    }

    static DatagramPacket datagram(int seq, int len) {
        ByteBuf b = Unpooled.buffer(len);
        b.writeInt(seq);
        b.writeZero(len - 4);
        return new DatagramPacket(b, PEER);
    }

    /** Runs the channel's timers until {@code count} datagrams came out (at most 5 s). */
    static List<DatagramPacket> drainOut(EmbeddedChannel ch, int count) throws InterruptedException {
        List<DatagramPacket> out = new ArrayList<>();
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (out.size() < count && System.nanoTime() < deadline) {
            ch.runScheduledPendingTasks();
            DatagramPacket p;
            while ((p = ch.readOutbound()) != null) {
                out.add(p);
            }
            if (out.size() < count) {
                Thread.sleep(2);
            }
        }
        return out;
    }

    @Test
    @Timeout(20)
    void farFutureFarPastAndGarbageSendTimesCountAsNow() throws Exception {
        NettyPacer pacer = new NettyPacer(16 * 1024);
        EmbeddedChannel ch = new EmbeddedChannel(pacer);
        long now = System.nanoTime();
        long[] unbelievable = {now + 10_000_000_000L, now + 1_000_000_000L, now - 5_000_000_000L,
                Long.MAX_VALUE / 2, -Long.MAX_VALUE / 3, 0x7fff_ffff_0000_0000L};
        int seq = 0;
        for (long at : unbelievable) {
            NettyHooks.onSendInfo(sendInfo(at));
            assertFalse(NettyHooks.holdSendLoop(ch), "send loop held for a send time " + (at - now) + " ns ahead");
            DatagramPacket d = datagram(seq++, 1200);
            assertTrue(ch.writeOutbound(d));
            DatagramPacket out = ch.readOutbound();
            assertNotNull(out, "datagram with send time " + (at - now) + " ns from now was held back");
            assertEquals(1, out.refCnt());
            out.release();
        }
        assertEquals(0, pacer.queued());
        // a believable future send time is still paced (the test can tell the difference)
        // due in 80 ms (under the 100 ms beyond which a send time is not believed): only a 79 ms pause of this
        // thread before the write lets it leave at once (40 ms until 2026-12-04); drainOut below waits for it
        NettyHooks.onSendInfo(sendInfo(System.nanoTime() + 80_000_000L));
        DatagramPacket held = datagram(99, 1200);
        ch.writeOutbound(held);
        assertNull(ch.readOutbound(), "a datagram due in 80 ms left at once");
        assertEquals(1, pacer.queued());
        List<DatagramPacket> later = drainOut(ch, 1);
        assertEquals(1, later.size());
        assertEquals(99, later.get(0).content().getInt(0));
        later.get(0).release();
        assertFalse(ch.finish());
    }

    @Test
    void theBelievableWindowIsMinusOneSecondToPlusOneHundredMilliseconds() {
        long now = 5_000_000_000_000L;
        assertEquals(now + 99_999_999L, NettyPacingHooks.believable(now + 99_999_999L, now));
        assertEquals(0, NettyPacingHooks.believable(now + 100_000_000L, now));
        assertEquals(now - 999_999_999L, NettyPacingHooks.believable(now - 999_999_999L, now));
        assertEquals(0, NettyPacingHooks.believable(now - 1_000_000_000L, now));
        assertEquals(0, NettyPacingHooks.believable(Long.MIN_VALUE, now));
        assertEquals(0, NettyPacingHooks.believable(Long.MAX_VALUE, now));
    }

    @Test
    @Timeout(20)
    void theEndOfASendLoopClearsItsSendTime() throws Exception {
        NettyPacer pacer = new NettyPacer(16 * 1024);
        EmbeddedChannel ch = new EmbeddedChannel(pacer);
        // quiche filled a send_info, then answered DONE: no datagram took it
        NettyHooks.onSendInfo(sendInfo(System.nanoTime() + 60_000_000L));
        NettyHooks.sendExit(ch, -1);
        // a write outside the send loop (Retry, version negotiation, stateless reset) is not paced
        DatagramPacket retry = datagram(1, 100);
        ch.writeOutbound(retry);
        DatagramPacket out = ch.readOutbound();
        assertNotNull(out, "a write outside quiche's send loop took the last loop's send time");
        out.release();
        assertEquals(0, pacer.queued());
        assertFalse(ch.finish());
    }

    @Test
    @Timeout(30)
    void queuesAreBoundedPerDestinationAndKeepOrder() throws Exception {
        NettyPacer pacer = new NettyPacer(16 * 1024);
        EmbeddedChannel ch = new EmbeddedChannel(pacer);
        // large datagrams, so the byte cap binds long before the send time comes
        int n = 200;
        int size = 60_004;
        byte[] payload = new byte[size - 4];
        // the pacer's clock stands still while the queue fills (a loaded machine cannot change the outcome)
        long frozen = System.nanoTime();
        pacer.clock = () -> frozen;
        List<DatagramPacket> sent = new ArrayList<>();
        long at = frozen + 95_000_000L;
        int maxQueued = 0;
        for (int i = 0; i < n; i++) {
            NettyHooks.onSendInfo(sendInfo(at));
            DatagramPacket d = new DatagramPacket(Unpooled.wrappedBuffer(Unpooled.copyInt(i),
                    Unpooled.wrappedBuffer(payload)), PEER);
            sent.add(d);
            ch.write(d);
            maxQueued = Math.max(maxQueued, pacer.queued());
        }
        ch.flush();
        long capByBytes = NettyPacer.MAX_QUEUED_BYTES / size;
        assertTrue(maxQueued <= capByBytes, "queued " + maxQueued + " datagrams of " + size + " bytes");
        assertTrue(maxQueued >= capByBytes - 1, "the cap did not bind: " + maxQueued);
        assertEquals(n - maxQueued, pacer.overCap, "datagrams that left early at the cap");
        pacer.clock = System::nanoTime;
        List<DatagramPacket> out = drainOut(ch, n);
        assertEquals(n, out.size(), "not every datagram came out");
        for (int i = 0; i < n; i++) {
            assertEquals(i, out.get(i).content().getInt(0), "reordered at " + i);
            assertEquals(1, out.get(i).refCnt());
            out.get(i).release();
        }
        for (DatagramPacket d : sent) {
            assertEquals(0, d.refCnt());
        }
        assertFalse(ch.finish());
    }

    /**
     * The pacer's wake-up is lost (cancelled behind its back) while a datagram waits: the next write more
     * than {@link NettyPacer#MAX_HOLD_NANOS} after it was due arms a new one (one fallback), and both
     * datagrams come out, once each and in order. Without the check that write found a timer armed and
     * nothing ever came out. The pacer's clock is the test's, so no pause of this thread changes the outcome.
     */
    @Test
    @Timeout(20)
    void aLostWakeUpIsArmedAgainByTheNextWriteAndNothingIsDroppedOrReordered() throws Exception {
        NettyPacer pacer = new NettyPacer(16 * 1024);
        EmbeddedChannel ch = new EmbeddedChannel(pacer);
        long t0 = System.nanoTime();
        long[] now = {t0};
        pacer.clock = () -> now[0];
        NettyHooks.onSendInfo(sendInfo(t0 + 50_000_000L));
        ChannelFuture first = ch.writeAndFlush(datagram(0, 500));
        assertEquals(1, pacer.queued());
        assertNotNull(pacer.timer, "no wake-up armed for the queued datagram");
        pacer.timer.cancel(false); // lost
        long fallbacks = AgentRuntime.fallbacks();
        now[0] = t0 + 50_000_000L + NettyPacer.MAX_HOLD_NANOS + 1_000_000L;
        NettyHooks.onSendInfo(sendInfo(now[0])); // due now, but behind the first (a FIFO)
        ChannelFuture second = ch.writeAndFlush(datagram(1, 500));
        assertEquals(fallbacks + 1, AgentRuntime.fallbacks(), "the lost wake-up was not recorded as a fallback");
        List<DatagramPacket> out = drainOut(ch, 2);
        assertEquals(2, out.size(), "the queue was not released after its wake-up was lost");
        for (int i = 0; i < 2; i++) {
            assertEquals(i, out.get(i).content().getInt(0), "reordered at " + i);
            assertEquals(1, out.get(i).refCnt());
            out.get(i).release();
        }
        assertTrue(first.isSuccess() && second.isSuccess(), "a write was not completed");
        assertEquals(0, pacer.queued());
        assertFalse(ch.finish());
    }

    @Test
    @Timeout(20)
    void aTimerThatCannotBeArmedWritesTheQueueOnceNeverTwice() throws Exception {
        RejectingExecutor rejecting = new RejectingExecutor();
        NettyPacer pacer = new NettyPacer(16 * 1024);
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.pipeline().addLast(rejecting, "pacer", pacer);
        List<ChannelFuture> promises = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            // due in 80 ms, so the pacer asks for a timer (refused) unless this thread pauses 79 ms before the
            // write, three times in a row (50 ms until 2026-12-04); nothing waits for that time
            NettyHooks.onSendInfo(sendInfo(System.nanoTime() + 80_000_000L));
            promises.add(ch.writeAndFlush(datagram(i, 500)));
        }
        List<DatagramPacket> out = new ArrayList<>();
        DatagramPacket p;
        while ((p = ch.readOutbound()) != null) {
            out.add(p);
        }
        assertEquals(3, out.size(), "fail-open did not write the queued datagrams");
        for (int i = 0; i < 3; i++) {
            assertEquals(i, out.get(i).content().getInt(0));
            assertTrue(promises.get(i).isSuccess(), "write " + i + " not completed");
        }
        assertEquals(0, pacer.queued());
        ch.close();
        ch.finish();
        for (DatagramPacket d : out) {
            assertEquals(1, d.refCnt(), "a datagram written by the fail-open path was released again");
            d.release();
        }
        assertTrue(rejecting.rejected.get() > 0, "the timer was never refused: the test did not test");
        rejecting.shutdownGracefully(0, 0, TimeUnit.SECONDS);
    }

    @Test
    @Timeout(30)
    void eventLoopShutDownWithDatagramsQueuedReleasesEachOnceWithoutHanging() throws Exception {
        EventLoopGroup group = new NioEventLoopGroup(1);
        NettyPacer pacer = new NettyPacer(16 * 1024);
        List<CountingBuf> bufs = new ArrayList<>();
        List<ChannelFuture> writes = new ArrayList<>();
        try {
            io.netty.channel.Channel ch = new io.netty.bootstrap.Bootstrap().group(group)
                    .channel(NioDatagramChannel.class)
                    .handler(new ChannelInitializer<NioDatagramChannel>() {
                        @Override
                        protected void initChannel(NioDatagramChannel c) {
                            c.pipeline().addLast(pacer);
                        }
                    })
                    .bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
            ch.eventLoop().submit(() -> {
                // the pacer's clock stands still while the loop writes, so the first datagram (due in 90 ms) waits
                // and every later one queues behind it whatever this thread's speed: 200 held, not "most of them"
                long frozen = System.nanoTime();
                pacer.clock = () -> frozen;
                long at = frozen + 90_000_000L;
                for (int i = 0; i < 200; i++) {
                    NettyHooks.onSendInfo(sendInfo(at + i * 100_000L));
                    CountingBuf b = new CountingBuf(1000);
                    b.writeInt(i);
                    b.writeZero(996);
                    bufs.add(b);
                    writes.add(ch.write(new DatagramPacket(b, PEER)));
                }
                ch.flush();
                NettyPacingHooks.endSendLoop();
            }).get(10, TimeUnit.SECONDS);
            assertEquals(200, pacer.queued(), "datagrams held when the loop shuts down");
        } finally {
            assertTrue(group.shutdownGracefully(0, 0, TimeUnit.SECONDS).await(15, TimeUnit.SECONDS),
                    "event loop did not terminate");
        }
        // a loop shut down without closing the channel releases what the pacer holds from its termination
        // listener, which may run just after the group's own termination future completed: bounded wait
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (writes.stream().anyMatch(w -> !w.isDone()) && System.nanoTime() < until) {
            Thread.sleep(10);
        }
        for (int i = 0; i < bufs.size(); i++) {
            assertTrue(writes.get(i).isDone(), "write " + i + " never completed");
            assertEquals(0, bufs.get(i).refCnt(), "datagram " + i + " leaked");
            assertEquals(1, bufs.get(i).releases.get(), "datagram " + i + " released " + bufs.get(i).releases + " times");
        }
        assertEquals(0, pacer.queued());
    }

    /** A heap buffer that counts release calls (a second release of a freed buffer is the bug we look for). */
    static final class CountingBuf extends io.netty.buffer.UnpooledHeapByteBuf {
        final AtomicInteger releases = new AtomicInteger();

        CountingBuf(int capacity) {
            super(io.netty.buffer.UnpooledByteBufAllocator.DEFAULT, capacity, capacity);
        }

        @Override
        public boolean release() {
            releases.incrementAndGet();
            return super.release();
        }

        @Override
        public boolean release(int decrement) {
            releases.incrementAndGet();
            return super.release(decrement);
        }
    }

    @Test
    @Timeout(20)
    void slotsOfThreadsThatEndedArePruned() throws Exception {
        int before = NettyPacingHooks.slotCount();
        for (int i = 0; i < 20; i++) {
            Thread t = new Thread(() -> NettyHooks.onSendInfo(sendInfo(System.nanoTime())));
            t.start();
            t.join(5_000);
        }
        assertTrue(NettyPacingHooks.slotCount() <= before + 1, "slots: " + NettyPacingHooks.slotCount() + " (before " + before + ")");
    }

    @Test
    void freedConfigsAreForgotten() {
        NettyConfigs.CONFIGS.put(12345L, new NettyConfigs.AppSettings(1, "CUBIC", true, 10));
        NettyHooks.onConfigFreed(12345L);
        assertFalse(NettyConfigs.CONFIGS.containsKey(12345L));
    }

    /** An executor that runs everything inline (like the channel's own loop) but refuses every timer. */
    static final class RejectingExecutor extends DefaultEventLoop {
        final AtomicInteger rejected = new AtomicInteger();

        @Override
        public boolean inEventLoop(Thread thread) {
            return true;
        }

        @Override
        public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
            rejected.incrementAndGet();
            throw new RejectedExecutionException("event executor terminated (test)");
        }
    }
}
