package dev.ccagent.it.kwik;

import net.bytebuddy.asm.MemberSubstitution;

import java.lang.instrument.Instrumentation;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.Function;

import static net.bytebuddy.matcher.ElementMatchers.named;

/**
 * A test-only agent that makes kwik's stream-send race (see ccagent's {@code fix.kwik-stream-stall})
 * happen on purpose: in {@code StreamOutputStreamImpl.scheduleSendStreamFrameRequest} the call that
 * queues the send request ({@code QuicConnectionImpl.send(..)}) is followed by a 2 ms pause on
 * application threads, i.e. between queueing the request and kwik's late
 * {@code sendRequestsQueued.incrementAndGet()}. kwik's sender thread takes the request inside that
 * pause, so unpatched kwik loses the stream's wake-up; with ccagent's fix the slot is claimed before
 * the request is queued and the pause is harmless. It changes no kwik logic, only timing.
 *
 * <p>Loaded with {@code -javaagent:} a manifest-only jar naming this class (Premain-Class), with
 * this module and Byte Buddy on the class path.
 */
public final class StallWidener {

    public static final long PAUSE_NANOS = 2_000_000;

    private StallWidener() {
    }

    public static void premain(String args, Instrumentation inst) throws Exception {
        java.lang.reflect.Method replacement = StallWidener.class.getMethod("sendThenPause", Object.class, Function.class,
                int.class, Object.class, Consumer.class, boolean.class);
        Class<?> connection = Class.forName("tech.kwik.core.impl.QuicConnectionImpl", false, ClassLoader.getSystemClassLoader());
        dev.ccagent.it.TestAgentListener.widener("stall-widener")
                .type(named("tech.kwik.core.stream.StreamOutputStreamImpl"))
                .transform((builder, type, loader, module, domain) -> builder.visit(MemberSubstitution.relaxed()
                        .method(named("send").and(net.bytebuddy.matcher.ElementMatchers.isDeclaredBy(connection)))
                        .replaceWith(replacement)
                        .on(named("scheduleSendStreamFrameRequest"))))
                .installOn(inst);
    }

    /** Queues the request as kwik would, then (on application threads) pauses before kwik counts it. */
    @SuppressWarnings({"rawtypes", "unchecked"})
    public static void sendThenPause(Object connection, Function frameSupplier, int minimumSize, Object level,
                                     Consumer lostCallback, boolean flush) {
        try {
            java.lang.reflect.Method send = SEND.get(connection.getClass());
            send.invoke(connection, frameSupplier, minimumSize, level, lostCallback, flush);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
        if (!Thread.currentThread().getName().startsWith("sender")) {
            LockSupport.parkNanos(PAUSE_NANOS);
        }
    }

    private static final ClassValue<java.lang.reflect.Method> SEND = new ClassValue<>() {
        @Override
        protected java.lang.reflect.Method computeValue(Class<?> type) {
            for (Class<?> c = type; c != null; c = c.getSuperclass()) {
                for (java.lang.reflect.Method m : c.getDeclaredMethods()) {
                    if (m.getName().equals("send") && m.getParameterCount() == 5
                            && m.getParameterTypes()[0] == Function.class && m.getParameterTypes()[1] == int.class) {
                        m.setAccessible(true);
                        return m;
                    }
                }
            }
            throw new IllegalStateException("no send(Function, int, EncryptionLevel, Consumer, boolean) in " + type);
        }
    };
}
