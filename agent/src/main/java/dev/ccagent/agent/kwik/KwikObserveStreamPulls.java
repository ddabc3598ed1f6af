package dev.ccagent.agent.kwik;

import dev.ccagent.agent.instrument.Requirement;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.matcher.ElementMatcher;

import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

/**
 * kwik observe-only, {@code StreamOutputStreamImpl.sendFrame(int)} for the window detector
 * ({@link KwikObserveTelemetry#framePulled}): the packet assembler asks a stream for a frame; an answer of none is
 * a turn of the send loop that sent nothing. kwik 0.10.0-0.10.3 spin there: a stream blocked by flow control with
 * data buffered re-queues its request and answers none, and the assembler asks again at once, inside one
 * loop iteration. The advice reads the answer only.
 */
public final class KwikObserveStreamPulls {

    static final Requirement REQUIREMENT = Requirement.type(KwikStreamStallFixModule.STREAM_OUTPUT)
            .method("sendFrame", "(I)Ltech/kwik/core/frame/QuicFrame;");

    private KwikObserveStreamPulls() {
    }

    static AgentBuilder extend(AgentBuilder builder, ElementMatcher<ClassLoader> loaderCheck) {
        return builder
                .type(KwikModule.typeThenLoader(named(KwikStreamStallFixModule.STREAM_OUTPUT), loaderCheck))
                .transform(KwikModule.agentAdvice()
                        .advice(named("sendFrame").and(takesArguments(1)), FrameAdvice.class.getName()));
    }

    public static final class FrameAdvice {
        private FrameAdvice() {
        }

        @Advice.OnMethodExit(suppress = Throwable.class)
        static void exit(@Advice.Return Object frame) {
            KwikObserveTelemetry.framePulled(frame == null);
        }
    }
}
