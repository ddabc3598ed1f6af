package dev.ccagent.agent.netty;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.instrument.Requirement;
import dev.ccagent.agent.instrument.TargetModule;
import dev.ccagent.agent.log.AgentLog;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.asm.MemberSubstitution;
import net.bytebuddy.implementation.bytecode.assign.Assigner;
import net.bytebuddy.matcher.ElementMatcher;
import net.bytebuddy.utility.JavaModule;

import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.util.List;

import static net.bytebuddy.matcher.ElementMatchers.isConstructor;
import static net.bytebuddy.matcher.ElementMatchers.isMethod;
import static net.bytebuddy.matcher.ElementMatchers.nameStartsWith;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

/**
 * Netty QUIC (quiche inside): one instance per package, {@code io.netty.handler.codec.quic}
 * (Netty 4.2.x) and {@code io.netty.incubator.codec.quic} (incubator 0.0.x, Netty 4.1), which
 * have the same classes and members under different names.
 *
 * <ul>
 *   <li>{@code QuicheConfig}'s constructor: the application's algorithm, HyStart and initial window
 *       of each native config (to restore them).</li>
 *   <li>The calls of {@code Quiche.quiche_conn_new_with_tls[_and_client_dcid]} in
 *       {@code QuicheQuicServerCodec} (accept) and {@code QuicheQuicChannel} (connect) go through
 *       {@link NettyHooks#connNew}: set the chosen algorithm on the shared native config, create,
 *       restore, all on the same event-loop thread (quiche copies the config into the connection).</li>
 *   <li>{@code handleServer}/{@code connectNow} exits: the new channel, for path-stats sampling.</li>
 *   <li>{@code QuicheQuicConnection.nextSendInfo()} and {@code QuicheQuicCodec.handlerAdded}: pacing.</li>
 * </ul>
 *
 * Nothing changes a class's shape, so late attach can retransform. Classes in a named module
 * (Netty on the module path) are left alone: the hooks need reflective access to package-private natives.
 */
public final class NettyModule extends TargetModule {

    private final String pkg;
    private final String label;

    public NettyModule(AgentConfig config, String pkg, String label) {
        this.pkg = pkg;
        this.label = label;
    }

    /** The Netty 4.2.x module. */
    public static NettyModule netty42(AgentConfig config) {
        return new NettyModule(config, "io.netty.handler.codec.quic", "Netty QUIC 4.2.x (io.netty.handler.codec.quic)");
    }

    /** The incubator 0.0.x module. */
    public static NettyModule incubator(AgentConfig config) {
        return new NettyModule(config, "io.netty.incubator.codec.quic",
                "Netty incubator QUIC 0.0.x (io.netty.incubator.codec.quic)");
    }

    @Override
    public String library() {
        return "netty";
    }

    @Override
    public String description() {
        return label;
    }

    private String d(String simpleName) {
        return "L" + pkg.replace('.', '/') + "/" + simpleName + ";";
    }

    @Override
    protected List<Requirement> requirements() {
        String config = d("QuicheConfig");
        String configCtor = "(ILjava/lang/Boolean;Ljava/lang/Long;Ljava/lang/Long;Ljava/lang/Long;Ljava/lang/Long;"
                + "Ljava/lang/Long;Ljava/lang/Long;Ljava/lang/Long;Ljava/lang/Long;Ljava/lang/Long;Ljava/lang/Long;"
                + "Ljava/lang/Long;Ljava/lang/Boolean;Ljava/lang/Boolean;Ljava/lang/Boolean;"
                + d("QuicCongestionControlAlgorithm") + "Ljava/lang/Integer;Ljava/lang/Integer;Ljava/lang/Integer;"
                + "Ljava/lang/Long;[B)V";
        return List.of(
                Requirement.type(pkg + ".Quiche")
                        .method("quiche_conn_new_with_tls", "(JIJIJIJIJJZ)J")
                        .method("quiche_config_set_cc_algorithm", "(JI)V")
                        .method("quiche_config_set_initial_congestion_window_packets", "(JI)V")
                        .method("quiche_config_enable_hystart", "(JZ)V")
                        .method("quiche_version", "()Ljava/lang/String;")
                        .field("QUICHE_CC_RENO", "I")
                        .field("QUICHE_CC_CUBIC", "I")
                        .field("QUICHE_CC_BBR", "I")
                        .field("QUICHE_SEND_INFO_OFFSETOF_AT", "I"),
                Requirement.type(pkg + ".QuicheConfig")
                        .method("<init>", configCtor)
                        .field("config", "J"),
                Requirement.type(pkg + ".QuicheQuicServerCodec")
                        .method("handleServer", "(Lio/netty/channel/ChannelHandlerContext;Ljava/net/InetSocketAddress;"
                                + "Ljava/net/InetSocketAddress;" + d("QuicPacketType") + "JLio/netty/buffer/ByteBuf;"
                                + "Lio/netty/buffer/ByteBuf;Lio/netty/buffer/ByteBuf;Lio/netty/buffer/ByteBuf;"
                                + "Lio/netty/buffer/ByteBuf;Ljava/util/function/Consumer;I" + config + ")"
                                + d("QuicheQuicChannel")),
                Requirement.type(pkg + ".QuicheQuicChannel")
                        .method("connectNow", "(Ljava/util/function/Function;Ljava/util/concurrent/Executor;"
                                + "Ljava/util/function/Consumer;JIZLjava/nio/ByteBuffer;Ljava/nio/ByteBuffer;)V"),
                Requirement.type(pkg + ".QuicheQuicChannel")
                        .method("writePacket", "(Lio/netty/channel/socket/DatagramPacket;II)Z")
                        .method("recv", "(Ljava/net/InetSocketAddress;Ljava/net/InetSocketAddress;"
                                + "Lio/netty/buffer/ByteBuf;)V")
                        .method("connectionSend", "(" + d("QuicheQuicConnection") + ")"
                                + d("QuicheQuicChannel$SendResult")),
                Requirement.type(pkg + ".QuicheQuicConnection")
                        .method("nextSendInfo", "()Ljava/nio/ByteBuffer;"),
                Requirement.type(pkg + ".QuicheQuicCodec")
                        .method("handlerAdded", "(Lio/netty/channel/ChannelHandlerContext;)V"),
                Requirement.type(pkg + ".QuicChannel")
                        .method("collectPathStats", "(ILio/netty/util/concurrent/Promise;)Lio/netty/util/concurrent/Future;"),
                Requirement.type(pkg + ".QuicConnectionPathStats")
                        .method("cwnd", "()J").method("rtt", "()J").method("deliveryRate", "()J")
                        .method("sent", "()J").method("lost", "()J").method("sentBytes", "()J")
                        .method("lostBytes", "()J"),
                Requirement.type("io.netty.util.internal.PlatformDependent").method("getByte", "(J)B"),
                // the hooks must be reachable from Netty's class loader
                Requirement.type("dev.ccagent.agent.netty.NettyHooks"));
    }

    @Override
    protected String versionIn(ClassLoader loader) {
        return pkg.contains("incubator")
                ? mavenVersion(loader, "io.netty.incubator", "netty-incubator-codec-classes-quic", pkg + ".QuicheQuicChannel")
                : mavenVersion(loader, "io.netty", "netty-codec-classes-quic", pkg + ".QuicheQuicChannel");
    }

    @Override
    public AgentBuilder extend(AgentBuilder builder, ElementMatcher<ClassLoader> loaderCheck) {
        ClassLoader ours = NettyModule.class.getClassLoader();
        ElementMatcher<JavaModule> unnamed = m -> m == null || !m.isNamed();
        Method connNew;
        Method connNewDcid;
        try {
            connNew = NettyHooks.class.getMethod("connNew", long.class, int.class, long.class, int.class, long.class,
                    int.class, long.class, int.class, long.class, long.class, boolean.class);
            connNewDcid = NettyHooks.class.getMethod("connNewClientDcid", long.class, int.class, long.class, int.class,
                    long.class, int.class, long.class, int.class, long.class, long.class);
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException(e);
        }
        AgentBuilder.Transformer substitute = (typeBuilder, type, loader, module, domain) -> typeBuilder.visit(
                new LambdaBodies(MemberSubstitution.relaxed()
                        // resolve Quiche through Netty's own loader (the implicit pool cannot see it)
                        .with(MemberSubstitution.TypePoolResolver.ForClassFileLocator.of(loader))
                        .method(named("quiche_conn_new_with_tls").and(takesArguments(11)))
                        .replaceWith(connNew)
                        .method(named("quiche_conn_new_with_tls_and_client_dcid").and(takesArguments(10)))
                        .replaceWith(connNewDcid)));
        return builder
                .type(named(pkg + ".QuicheConfig"), loaderCheck, unnamed)
                .transform(new AgentBuilder.Transformer.ForAdvice().include(ours)
                        .advice(isConstructor().and(takesArguments(22)), ConfigAdvice.class.getName())
                        .advice(named("free").and(takesArguments(0)), ConfigFreeAdvice.class.getName()))
                .type(named(pkg + ".QuicheQuicServerCodec"), loaderCheck, unnamed)
                .transform(substitute)
                .transform(new AgentBuilder.Transformer.ForAdvice().include(ours)
                        .advice(named("handleServer").and(takesArguments(13)), ServerChannelAdvice.class.getName()))
                .type(named(pkg + ".QuicheQuicChannel"), loaderCheck, unnamed)
                .transform(substitute)
                .transform(new AgentBuilder.Transformer.ForAdvice().include(ours)
                        .advice(named("connectNow").and(takesArguments(8)), ClientChannelAdvice.class.getName())
                        .advice(named("writePacket").and(takesArguments(3)), WritePacketAdvice.class.getName())
                        .advice(named("connectionSend").and(takesArguments(1)), ConnectionSendAdvice.class.getName())
                        .advice(named("recv").and(takesArguments(3)), RecvAdvice.class.getName()))
                .type(named(pkg + ".QuicheQuicConnection"), loaderCheck, unnamed)
                .transform(new AgentBuilder.Transformer.ForAdvice().include(ours)
                        .advice(named("nextSendInfo").and(takesArguments(0)), SendInfoAdvice.class.getName()))
                .type(named(pkg + ".QuicheQuicCodec"), loaderCheck, unnamed)
                .transform(new AgentBuilder.Transformer.ForAdvice().include(ours)
                        .advice(named("handlerAdded").and(takesArguments(1)), CodecAddedAdvice.class.getName()));
    }

    @Override
    protected void onApplied(ClassLoader loader, String version) {
        AgentLog.debug("netty: " + pkg + " instrumented" + (version != null ? " (" + version + ")" : ""));
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

    /** Inlined at the end of QuicheQuicServerCodec.handleServer. */
    public static final class ServerChannelAdvice {
        private ServerChannelAdvice() {
        }

        @Advice.OnMethodExit(suppress = Throwable.class, onThrowable = Throwable.class)
        static void exit(@Advice.Return Object channel) {
            NettyHooks.onChannel(channel);
        }
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

    /** Inlined at the end of QuicheQuicConnection.nextSendInfo. */
    public static final class SendInfoAdvice {
        private SendInfoAdvice() {
        }

        @Advice.OnMethodExit(suppress = Throwable.class)
        static void exit(@Advice.Return ByteBuffer sendInfo) {
            NettyHooks.onSendInfo(sendInfo);
        }
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
