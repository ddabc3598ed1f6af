package dev.ccagent.agent.netty;

import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;

import static net.bytebuddy.matcher.ElementMatchers.isConstructor;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

/**
 * {@code QuicheConfig}: the application's algorithm, HyStart and initial window of each native config,
 * captured at the end of its constructor (to restore them after a connection of ours is created) and
 * forgotten at its {@code free()}.
 */
public final class QuicheConfigInstrumentation extends QuicheTypeInstrumentation {

    QuicheConfigInstrumentation(String pkg) {
        super(pkg, "QuicheConfig");
    }

    @Override
    public AgentBuilder transform(AgentBuilder.Identified.Narrowable matched) {
        return matched.transform(advice()
                .advice(isConstructor().and(takesArguments(22)), ConfigAdvice.class.getName())
                .advice(named("free").and(takesArguments(0)), ConfigFreeAdvice.class.getName()));
    }

    /** Inlined at the end of QuicheConfig's constructor. */
    public static final class ConfigAdvice {
        private ConfigAdvice() {
        }

        @Advice.OnMethodExit(suppress = Throwable.class)
        static void exit(@Advice.Origin Class<?> type, @Advice.FieldValue("config") long address,
                         @Advice.Argument(14) Boolean hystart, @Advice.Argument(16) Object cc,
                         @Advice.Argument(17) Integer cwnd) {
            NettyHooks.onConfig(type, address, hystart, cc, cwnd);
        }
    }

    /** Inlined at the start of QuicheConfig.free(): forget that native config's settings. */
    public static final class ConfigFreeAdvice {
        private ConfigFreeAdvice() {
        }

        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.FieldValue("config") long address) {
            NettyHooks.onConfigFreed(address);
        }
    }
}
