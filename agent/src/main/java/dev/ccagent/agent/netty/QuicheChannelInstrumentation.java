package dev.ccagent.agent.netty;

import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.implementation.bytecode.assign.Assigner;

import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

/**
 * {@code QuicheQuicChannel}: its calls of quiche's connection constructors (connect) go through
 * {@link NettyHooks} ({@link QuicheConnNewSubstitution}); the end of {@code connectNow} (the new
 * channel); {@code writePacket} (a datagram of quiche's send loop, and the pacing hold);
 * {@code connectionSend} (skipped while a paced datagram is held; send-loop counters); {@code recv};
 * {@code doClose} (the channel whose quiche connection {@code QuicheQuicConnection.free()} frees next,
 * for the last path-stats sample, {@link QuicheConnectionInstrumentation}).
 */
public final class QuicheChannelInstrumentation extends QuicheTypeInstrumentation {

    QuicheChannelInstrumentation(String pkg) {
        super(pkg, "QuicheQuicChannel");
    }

    @Override
    public AgentBuilder transform(AgentBuilder.Identified.Narrowable matched) {
        return matched.transform(new QuicheConnNewSubstitution())
                .transform(advice()
                        .advice(named("connectNow").and(takesArguments(8)), ClientChannelAdvice.class.getName())
                        .advice(named("writePacket").and(takesArguments(3)), WritePacketAdvice.class.getName())
                        .advice(named("connectionSend").and(takesArguments(1)), ConnectionSendAdvice.class.getName())
                        .advice(named("recv").and(takesArguments(3)), RecvAdvice.class.getName())
                        .advice(named("doClose").and(takesArguments(0)), CloseAdvice.class.getName()));
    }

    /** Inlined at the end of QuicheQuicChannel.connectNow. */
    public static final class ClientChannelAdvice {
        private ClientChannelAdvice() {
        }

        @Advice.OnMethodExit(suppress = Throwable.class, onThrowable = Throwable.class)
        static void exit(@Advice.This Object channel) {
            NettyHooks.onChannel(channel);
        }
    }

    /** Inlined at the start of QuicheQuicChannel.writePacket(DatagramPacket, int maxDatagramSize, int len). */
    public static final class WritePacketAdvice {
        private WritePacketAdvice() {
        }

        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.This Object channel, @Advice.Argument(value = 2, readOnly = false) int len) {
            NettyHooks.datagramWritten(channel);
            if (NettyHooks.holdSendLoop(channel)) {
                len = 0; // "send window used": Netty continues when this (paced) write completes
            }
        }
    }

    /**
     * Around QuicheQuicChannel.connectionSend(QuicheQuicConnection): skipped, answering NONE, while
     * the pacer holds the datagram that stopped this channel's send loop (its write's completion
     * calls connectionSend again).
     */
    public static final class ConnectionSendAdvice {
        private ConnectionSendAdvice() {
        }

        @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class, suppress = Throwable.class)
        static boolean enter(@Advice.This Object channel, @Advice.Local("before") long before) {
            if (NettyHooks.skipSend(channel)) {
                before = -1;
                return true;
            }
            before = NettyHooks.sendEnter(channel);
            return false;
        }

        @Advice.OnMethodExit(suppress = Throwable.class, onThrowable = Throwable.class)
        static void exit(@Advice.This Object channel, @Advice.Enter boolean skipped,
                         @Advice.Local("before") long before, @Advice.Origin Class<?> type,
                         @Advice.Return(readOnly = false, typing = Assigner.Typing.DYNAMIC) Object result) {
            if (skipped) {
                result = NettyHooks.sendResultNone(type);
            } else {
                NettyHooks.sendExit(channel, before);
            }
        }
    }

    /** Inlined at the start of QuicheQuicChannel.recv(InetSocketAddress, InetSocketAddress, ByteBuf). */
    public static final class RecvAdvice {
        private RecvAdvice() {
        }

        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.This Object channel) {
            NettyHooks.datagramReceived(channel);
        }
    }

    /**
     * Around QuicheQuicChannel.doClose(): names this channel as the one whose quiche connection is
     * freed next on this thread (doClose sends the close and frees the connection before it returns).
     */
    public static final class CloseAdvice {
        private CloseAdvice() {
        }

        @Advice.OnMethodEnter(suppress = Throwable.class)
        static Object enter(@Advice.This Object channel) {
            return NettyHooks.closing(channel);
        }

        @Advice.OnMethodExit(suppress = Throwable.class, onThrowable = Throwable.class)
        static void exit(@Advice.Enter Object previous) {
            NettyHooks.closed(previous);
        }
    }
}
