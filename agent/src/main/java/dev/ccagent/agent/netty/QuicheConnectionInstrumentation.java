package dev.ccagent.agent.netty;

import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;

import java.nio.ByteBuffer;

import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

/**
 * {@code QuicheQuicConnection.nextSendInfo()}: the {@code send_info} quiche fills for the datagram it
 * writes next (pacing); {@code free()}: the last path-stats sample of the closing channel, while quiche's
 * connection still exists.
 */
public final class QuicheConnectionInstrumentation extends QuicheTypeInstrumentation {

    QuicheConnectionInstrumentation(String pkg) {
        super(pkg, "QuicheQuicConnection");
    }

    @Override
    public AgentBuilder transform(AgentBuilder.Identified.Narrowable matched) {
        return matched.transform(advice()
                .advice(named("nextSendInfo").and(takesArguments(0)), SendInfoAdvice.class.getName())
                .advice(named("free").and(takesArguments(0)), FreeAdvice.class.getName()));
    }

    /** Inlined at the end of QuicheQuicConnection.nextSendInfo. */
    public static final class SendInfoAdvice {
        private SendInfoAdvice() {
        }

        @Advice.OnMethodExit(suppress = Throwable.class)
        static void exit(@Advice.Return ByteBuffer sendInfo) {
            NettyHooks.onSendInfo(sendInfo);
        }
    }

    /** Inlined at the start of QuicheQuicConnection.free(): quiche's connection is still there. */
    public static final class FreeAdvice {
        private FreeAdvice() {
        }

        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter() {
            NettyHooks.beforeFree();
        }
    }
}
