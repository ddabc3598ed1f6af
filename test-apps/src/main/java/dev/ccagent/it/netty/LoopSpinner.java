package dev.ccagent.it.netty;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

import java.util.zip.CRC32;

/**
 * A test-only handler that spins on its channel's event loop: given a {@link Spin} user event, it burns
 * the loop's thread for the event's time in one call ({@link #spinOnTheEventLoop}), so that nothing else
 * on that loop runs meanwhile (the QUIC connections it serves included). Netty's own event-loop spins
 * (the epoll bugs) are of this kind as the loop's connections see them: CPU burned on the loop's thread
 * while their work waits. Prints {@code LOOP SPIN thread=NAME startEpochMs=MS forMs=MS} as it starts and
 * {@code LOOP SPIN END epochMs=MS} as it returns.
 */
@ChannelHandler.Sharable
public final class LoopSpinner extends ChannelInboundHandlerAdapter {

    /** The user event: spin for {@code millis}. */
    public static final class Spin {
        final long millis;

        public Spin(long millis) {
            this.millis = millis;
        }
    }

    /** Keeps the spin's arithmetic from being optimized away. */
    static volatile long sink;

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (!(evt instanceof Spin)) {
            ctx.fireUserEventTriggered(evt);
            return;
        }
        long millis = ((Spin) evt).millis;
        System.out.println("LOOP SPIN thread=" + Thread.currentThread().getName() + " startEpochMs="
                + System.currentTimeMillis() + " forMs=" + millis);
        System.out.flush();
        sink = spinOnTheEventLoop(millis);
        System.out.println("LOOP SPIN END epochMs=" + System.currentTimeMillis());
        System.out.flush();
    }

    /** Burns this thread for {@code millis} ms without returning. */
    static long spinOnTheEventLoop(long millis) {
        long until = System.nanoTime() + millis * 1_000_000L;
        byte[] block = new byte[256];
        CRC32 crc = new CRC32();
        long rounds = 0;
        while (System.nanoTime() < until) {
            crc.update(block, 0, block.length);
            block[(int) (rounds++ & 255)] ^= (byte) crc.getValue();
        }
        return crc.getValue() + rounds;
    }
}
