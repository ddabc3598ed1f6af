package dev.ccagent.agent.netty;

import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;

import static net.bytebuddy.matcher.ElementMatchers.isConstructor;

/**
 * {@code QuicheQuicChannel}, observe-only ({@link NettyObserveModule}): the end of each of its constructors
 * hands the new channel to {@link NettyObserveWatch}. By any constructor, whatever its parameters: a Netty
 * version that changed them still has its connections watched.
 */
public final class QuicheChannelObserveInstrumentation extends QuicheTypeInstrumentation {

    QuicheChannelObserveInstrumentation(String pkg) {
        super(pkg, "QuicheQuicChannel");
    }

    @Override
    public AgentBuilder transform(AgentBuilder.Identified.Narrowable matched) {
        return matched.transform(advice().advice(isConstructor(), ConstructorAdvice.class.getName()));
    }

    /** Inlined at the end of QuicheQuicChannel's constructors. */
    public static final class ConstructorAdvice {
        private ConstructorAdvice() {
        }

        @Advice.OnMethodExit(suppress = Throwable.class)
        static void exit(@Advice.This Object channel) {
            NettyObserveWatch.channelCreated(channel);
        }
    }
}
