package dev.ccagent.it.kwik;

import net.bytebuddy.asm.Advice;
import net.bytebuddy.asm.MemberSubstitution;

import java.lang.instrument.Instrumentation;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static net.bytebuddy.matcher.ElementMatchers.isDeclaredBy;
import static net.bytebuddy.matcher.ElementMatchers.named;

/**
 * A test-only agent for a kwik client that makes kwik's loss-detection-timer race (see ccagent's
 * {@code fix.kwik-loss-timer}) happen on purpose, on the client's first connection. The race, as
 * measured in {@code KwikChurnTest}'s stalls (client state: Handshake space closed and never
 * acknowledged, application packet 0 in flight, no timer): the receiver thread, having confirmed the
 * handshake and discarded the Handshake space, runs {@code setLossDetectionTimer()}, finds nothing in
 * flight and decides to cancel; the sender thread registers the request (packet 0) and arms the
 * application-space timer; the receiver's late {@code unschedule()} then removes it. The widener:
 * <ol>
 *   <li>the client's first datagram that starts with a short-header (1-RTT) packet, its request, is
 *       not sent (lost on the wire), and the sender thread then waits, before kwik registers the packet,
 *       until the receiver's first pass after confirmation has decided to cancel (at most
 *       {@value #WAIT_SECONDS} s);</li>
 *   <li>that pass waits at its {@code unschedule()} call until the sender's pass for the request has
 *       returned (at most {@value #WAIT_SECONDS} s), then cancels.</li>
 * </ol>
 * It changes no kwik logic, only timing and the one lost datagram. Unpatched kwik is left with the
 * request in flight and no timer (the transfer stalls at 0 bytes); with ccagent's fix the sender's pass
 * waits for the receiver's pass to finish (the receiver's wait times out) and arms the timer after it,
 * and kwik's probe retransmits the request. A line on stderr says each step happened.
 *
 * <p>Loaded with {@code -javaagent:} a manifest-only jar naming this class (Premain-Class), before
 * ccagent, with this module and Byte Buddy on the class path.
 */
public final class LossTimerWidener {

    static final long WAIT_SECONDS = 2;

    static final long REQUEST_DELAY_MS = 300;

    private static final AtomicBoolean CONNECTED = new AtomicBoolean();
    private static volatile boolean requestComing;
    private static final AtomicBoolean DROPPED = new AtomicBoolean();
    private static final AtomicBoolean HELD = new AtomicBoolean();
    private static final CountDownLatch RECEIVER_DECIDED = new CountDownLatch(1);
    private static final CountDownLatch SENDER_PASSED = new CountDownLatch(1);

    private LossTimerWidener() {
    }

    public static void premain(String args, Instrumentation inst) throws Exception {
        java.lang.reflect.Method sendOrDrop = LossTimerWidener.class.getMethod("sendOrDrop", DatagramSocket.class, DatagramPacket.class);
        java.lang.reflect.Method unschedule = LossTimerWidener.class.getMethod("waitThenUnschedule", Object.class);
        dev.ccagent.it.TestAgentListener.widener("loss-timer-widener")
                .type(named("tech.kwik.core.send.SenderImpl"))
                .transform((builder, type, loader, module, domain) -> builder.visit(MemberSubstitution.relaxed()
                        .method(named("send").and(isDeclaredBy(DatagramSocket.class)))
                        .replaceWith(sendOrDrop)
                        .on(net.bytebuddy.matcher.ElementMatchers.any())))
                .type(named("tech.kwik.core.impl.QuicClientConnectionImpl"))
                .transform((builder, type, loader, module, domain) -> builder
                        .visit(Advice.to(AfterConnect.class).on(named("connect").and(net.bytebuddy.matcher.ElementMatchers.takesArguments(0)))))
                .type(named("tech.kwik.core.recovery.RecoveryManager"))
                .transform((builder, type, loader, module, domain) -> builder
                        .visit(MemberSubstitution.relaxed()
                                .method(named("unschedule").and(isDeclaredBy(named("tech.kwik.core.recovery.RecoveryManager"))))
                                .replaceWith(unschedule)
                                .on(named("setLossDetectionTimer")))
                        .visit(Advice.to(SenderPassed.class).on(named("setLossDetectionTimer"))))
                .installOn(inst);
    }

    /** Replaces kwik's {@code socket.send(datagram)}: the first short-header datagram is lost. */
    public static void sendOrDrop(DatagramSocket socket, DatagramPacket datagram) throws java.io.IOException {
        boolean shortHeader = datagram.getLength() > 0 && (datagram.getData()[datagram.getOffset()] & 0x80) == 0;
        if (shortHeader && requestComing && DROPPED.compareAndSet(false, true)) {
            System.err.println("[loss-timer-widener] dropped the request's 1-RTT datagram (" + datagram.getLength()
                    + " bytes); the receiver's pass had decided to cancel before: " + (RECEIVER_DECIDED.getCount() == 0));
            return;
        }
        socket.send(datagram);
    }

    /** Replaces {@code unschedule()} in setLossDetectionTimer: the receiver's first pass after confirmation waits. */
    public static void waitThenUnschedule(Object recoveryManager) {
        if (!requestComing && Thread.currentThread().getName().startsWith("receiver")
                && "Confirmed".equals(String.valueOf(field(recoveryManager, "handshakeState")))
                && HELD.compareAndSet(false, true)) {
            RECEIVER_DECIDED.countDown();
            boolean passed = await(SENDER_PASSED);
            System.err.println("[loss-timer-widener] the receiver's pass cancels now; the sender's pass for the request returned before: " + passed);
        }
        try {
            java.lang.reflect.Method m = recoveryManager.getClass().getDeclaredMethod("unschedule");
            m.setAccessible(true);
            m.invoke(recoveryManager);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Inlined at the end of QuicClientConnectionImpl.connect(): the application writes its request later. */
    public static final class AfterConnect {
        private AfterConnect() {
        }

        @Advice.OnMethodExit
        public static void exit() {
            LossTimerWidener.afterConnect();
        }
    }

    /** The first connection's request waits until the handshake is confirmed and the receiver's pass waits. */
    public static void afterConnect() {
        if (CONNECTED.compareAndSet(false, true)) {
            try {
                Thread.sleep(REQUEST_DELAY_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            requestComing = true;
        }
    }

    /** Inlined at the end of RecoveryManager.setLossDetectionTimer(). */
    public static final class SenderPassed {
        private SenderPassed() {
        }

        @Advice.OnMethodExit
        public static void exit() {
            LossTimerWidener.afterPass();
        }
    }

    /** The sender's first pass after the receiver decided: the one for the request. */
    public static void afterPass() {
        if (DROPPED.get() && RECEIVER_DECIDED.getCount() == 0 && Thread.currentThread().getName().startsWith("sender")) {
            SENDER_PASSED.countDown();
        }
    }

    private static boolean await(CountDownLatch latch) {
        try {
            return latch.await(WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static Object field(Object target, String name) {
        try {
            java.lang.reflect.Field f = target.getClass().getDeclaredField(name);
            f.setAccessible(true);
            return f.get(target);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }
}
