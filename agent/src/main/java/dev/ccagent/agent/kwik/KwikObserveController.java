package dev.ccagent.agent.kwik;

import dev.ccagent.agent.instrument.Requirement;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.matcher.ElementMatcher;

import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

/**
 * kwik observe-only, kwik's own controller ({@code AbstractCongestionController}, which {@code NewReno} extends
 * and calls) for the window detector ({@link KwikObserveTelemetry}): what the adapter counts beside the swap.
 * <ul>
 *   <li>{@code registerInFlight(QuicPacket)}: a packet in flight and its size ({@code LossDetector.packetSent}
 *       calls it for in-flight packets only; datagrams minus these are ACK-only);</li>
 *   <li>{@code remainingCwnd()}: an answer of no room is a refusal (the sender had something to say).</li>
 * </ul>
 * Both run on the connection's sender thread; on any other thread the advice counts nothing.
 */
public final class KwikObserveController {

    static final String TYPE = "tech.kwik.core.cc.AbstractCongestionController";

    static final Requirement REQUIREMENT = Requirement.type(TYPE)
            .method("registerInFlight", "(Ltech/kwik/core/packet/QuicPacket;)V")
            .method("remainingCwnd", "()J");
    static final Requirement PACKET = Requirement.type("tech.kwik.core.packet.QuicPacket")
            .method("getSize", "()I");

    private KwikObserveController() {
    }

    static AgentBuilder extend(AgentBuilder builder, ElementMatcher<ClassLoader> loaderCheck) {
        return builder
                .type(KwikModule.typeThenLoader(named(TYPE), loaderCheck))
                .transform(KwikModule.agentAdvice()
                        .advice(named("registerInFlight").and(takesArguments(1)), InFlightAdvice.class.getName())
                        .advice(named("remainingCwnd").and(takesArguments(0)), RemainingAdvice.class.getName()));
    }

    public static final class InFlightAdvice {
        private InFlightAdvice() {
        }

        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.Argument(0) tech.kwik.core.packet.QuicPacket packet) {
            KwikObserveTelemetry.packetInFlight(packet.getSize());
        }
    }

    public static final class RemainingAdvice {
        private RemainingAdvice() {
        }

        @Advice.OnMethodExit(suppress = Throwable.class)
        static void exit(@Advice.Return long answer) {
            KwikObserveTelemetry.remainingCwnd(answer);
        }
    }
}
