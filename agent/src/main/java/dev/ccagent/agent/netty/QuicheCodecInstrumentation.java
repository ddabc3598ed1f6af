package dev.ccagent.agent.netty;

import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;

import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

/** {@code QuicheQuicCodec.handlerAdded(ctx)}: where the pacer goes between the socket and the codec. */
public final class QuicheCodecInstrumentation extends QuicheTypeInstrumentation {

    QuicheCodecInstrumentation(String pkg) {
        super(pkg, "QuicheQuicCodec");
    }

    @Override
    public AgentBuilder transform(AgentBuilder.Identified.Narrowable matched) {
        return matched.transform(advice()
                .advice(named("handlerAdded").and(takesArguments(1)), CodecAddedAdvice.class.getName()));
    }

    /** Inlined at the end of QuicheQuicCodec.handlerAdded(ChannelHandlerContext). */
    public static final class CodecAddedAdvice {
        private CodecAddedAdvice() {
        }

        @Advice.OnMethodExit(suppress = Throwable.class)
        static void exit(@Advice.Argument(0) Object ctx) {
            NettyHooks.onCodecAdded(ctx);
        }
    }
}
