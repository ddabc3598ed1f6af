package dev.ccagent.agent.netty;

import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.ImmediateEventExecutor;
import io.netty.util.concurrent.Promise;

import java.lang.reflect.Method;

/**
 * quiche's path stats of a QUIC channel as Netty hands them out: the public
 * {@code QuicChannel.collectPathStats(0, promise)} and {@code QuicConnectionPathStats}'s accessors, the
 * same members in {@code io.netty.handler.codec.quic} and {@code io.netty.incubator.codec.quic}, looked up
 * once per channel class (in the channel's own package and loader). Used by the periodic sample
 * ({@link NettyConnections}) and by window pacing ({@link NettyChannelPacing}); call on the channel's
 * event loop (quiche frees a connection there).
 */
final class QuichePathStats {

    static final int CWND = 0;
    static final int RTT = 1;
    static final int DELIVERY_RATE = 2;
    static final int SENT = 3;
    static final int LOST = 4;
    static final int SENT_BYTES = 5;
    static final int LOST_BYTES = 6;

    private static final String[] ACCESSORS = {"cwnd", "rtt", "deliveryRate", "sent", "lost", "sentBytes", "lostBytes"};

    /** Per QUIC channel class: {collectPathStats, the accessors in field order}, or null when its Netty lacks one. */
    private static final ClassValue<Method[]> METHODS = new ClassValue<>() {
        @Override
        protected Method[] computeValue(Class<?> channelClass) {
            try {
                String pkg = channelClass.getPackageName();
                ClassLoader loader = channelClass.getClassLoader();
                Class<?> quicChannel = Class.forName(pkg + ".QuicChannel", false, loader);
                Class<?> stats = Class.forName(pkg + ".QuicConnectionPathStats", false, loader);
                Method[] m = new Method[ACCESSORS.length + 1];
                m[0] = quicChannel.getMethod("collectPathStats", int.class, Promise.class);
                for (int i = 0; i < ACCESSORS.length; i++) {
                    m[i + 1] = stats.getMethod(ACCESSORS[i]);
                }
                return m;
            } catch (ReflectiveOperationException | LinkageError e) {
                return null;
            }
        }
    };

    private QuichePathStats() {
    }

    /** Throws when the channel's Netty lacks the path-stats members (checked once per class). */
    static void require(Class<?> channelClass) throws NoSuchMethodException {
        methods(channelClass);
    }

    private static Method[] methods(Class<?> channelClass) throws NoSuchMethodException {
        Method[] m = METHODS.get(channelClass);
        if (m == null) {
            throw new NoSuchMethodException("QuicChannel.collectPathStats / QuicConnectionPathStats."
                    + String.join(", ", ACCESSORS) + " in " + channelClass.getPackageName());
        }
        return m;
    }

    /** Path 0's stats now, or null when the channel closed meanwhile (the promise failed) or did not answer at once. */
    static Object sample(Object channel) throws ReflectiveOperationException {
        Promise<Object> promise = ImmediateEventExecutor.INSTANCE.newPromise();
        return ((Future<?>) methods(channel.getClass())[0].invoke(channel, 0, promise)).getNow();
    }

    /** One field ({@link #CWND} ...) of a {@link #sample} of {@code channel}. */
    static long field(Object channel, Object stats, int field) throws ReflectiveOperationException {
        return (Long) methods(channel.getClass())[field + 1].invoke(stats);
    }
}
