package dev.ccagent.agent.netty;

import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;

import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

/**
 * {@code QuicheQuicServerCodec}: its call of {@code Quiche.quiche_conn_new_with_tls} (accept) goes
 * through {@link NettyHooks#connNew} ({@link QuicheConnNewSubstitution}); at the end of
 * {@code handleServer}, the new channel, for path-stats sampling.
 */
public final class QuicheServerCodecInstrumentation extends QuicheTypeInstrumentation {

    QuicheServerCodecInstrumentation(String pkg) {
        super(pkg, "QuicheQuicServerCodec");
    }

    @Override
    public AgentBuilder transform(AgentBuilder.Identified.Narrowable matched) {
        return matched.transform(new QuicheConnNewSubstitution())
                .transform(advice()
                        .advice(named("handleServer").and(takesArguments(13)), ServerChannelAdvice.class.getName()));
    }

    /** Inlined at the end of QuicheQuicServerCodec.handleServer. */
    public static final class ServerChannelAdvice {
        private ServerChannelAdvice() {
        }

        @Advice.OnMethodExit(suppress = Throwable.class, onThrowable = Throwable.class)
        static void exit(@Advice.Return Object channel) {
            NettyHooks.onChannel(channel);
        }
    }
}
