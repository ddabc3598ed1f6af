package dev.ccagent.agent.kwik;

import dev.ccagent.agent.instrument.Requirement;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.matcher.ElementMatcher;

import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

/**
 * kwik observe-only, {@code SenderImpl}'s send loop for the window detector ({@link KwikObserveTelemetry}): the
 * same four methods {@link KwikTelemetry} and {@link KwikMeter} advise beside the swap, read without the adapter.
 * Each advice only counts; none changes what kwik does.
 * <ul>
 *   <li>{@code doLoopIteration()}: one sender-loop iteration; empty when no datagram left during it;</li>
 *   <li>{@code send(List<SendItem>)}: one datagram handed to the socket;</li>
 *   <li>{@code packetProcessed(boolean)}: one received packet (receiver thread), which wakes the sender once;</li>
 *   <li>{@code stop()}: the connection's end (every close path), where its last window ends.</li>
 * </ul>
 */
public final class KwikObserveSenderLoop {

    static final Requirement REQUIREMENT = Requirement.type(KwikReflection.SENDER_IMPL)
            .method("doLoopIteration", "()V")
            .method("send", "(Ljava/util/List;)V")
            .method("packetProcessed", "(Z)V")
            .method("stop", "()V");

    private KwikObserveSenderLoop() {
    }

    static AgentBuilder extend(AgentBuilder builder, ElementMatcher<ClassLoader> loaderCheck) {
        return builder
                .type(KwikModule.typeThenLoader(named(KwikReflection.SENDER_IMPL), loaderCheck))
                .transform(KwikTelemetry.senderLoopAdvice(LoopAdvice.class, SendAdvice.class, ReceivedAdvice.class)
                        .advice(named("stop").and(takesArguments(0)), StopAdvice.class.getName()));
    }

    public static final class LoopAdvice {
        private LoopAdvice() {
        }

        @Advice.OnMethodEnter(suppress = Throwable.class)
        static long enter(@Advice.This Object sender) {
            return KwikObserveTelemetry.loopEnter(sender);
        }

        @Advice.OnMethodExit(suppress = Throwable.class, onThrowable = Throwable.class)
        static void exit(@Advice.Enter long before) {
            KwikObserveTelemetry.loopExit(before);
        }
    }

    public static final class SendAdvice {
        private SendAdvice() {
        }

        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter() {
            KwikObserveTelemetry.datagramSent();
        }
    }

    public static final class ReceivedAdvice {
        private ReceivedAdvice() {
        }

        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.This Object sender) {
            KwikObserveTelemetry.packetReceived(sender);
        }
    }

    public static final class StopAdvice {
        private StopAdvice() {
        }

        @Advice.OnMethodExit(suppress = Throwable.class, onThrowable = Throwable.class)
        static void exit(@Advice.This Object sender) {
            KwikObserveTelemetry.senderStopped(sender);
        }
    }
}
