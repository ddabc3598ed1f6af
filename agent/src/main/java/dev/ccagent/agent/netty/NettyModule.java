package dev.ccagent.agent.netty;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.instrument.Requirement;
import dev.ccagent.agent.instrument.TargetModule;
import dev.ccagent.agent.instrument.TypeInstrumentation;
import dev.ccagent.agent.log.AgentLog;

import java.util.List;

/**
 * Netty QUIC (quiche inside): one instance per package, {@code io.netty.handler.codec.quic}
 * (Netty 4.2.x) and {@code io.netty.incubator.codec.quic} (incubator 0.0.x, Netty 4.1), which
 * have the same classes and members under different names.
 *
 * <p>One file per instrumented type, each with its matcher and advice:
 * {@link QuicheConfigInstrumentation} (the application's settings of each native config),
 * {@link QuicheServerCodecInstrumentation} and {@link QuicheChannelInstrumentation} (quiche's connection
 * constructor through {@link NettyHooks#connNew}, the new channel, the send loop),
 * {@link QuicheConnectionInstrumentation} and {@link QuicheCodecInstrumentation} (pacing). This class
 * holds what they share: the requirement checks (every class and member the advice needs) and the
 * class-loader linkage check ({@link NettyLinkage}).
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

    /** The package of the Netty QUIC classes this module covers. */
    String pkg() {
        return pkg;
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
                                + d("QuicheQuicChannel$SendResult"))
                        .method("doClose", "()V"),
                Requirement.type(pkg + ".QuicheQuicConnection")
                        .method("nextSendInfo", "()Ljava/nio/ByteBuffer;")
                        .method("free", "()V"),
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
                Requirement.agentType("dev.ccagent.agent.netty.NettyHooks"));
    }

    @Override
    protected String versionIn(ClassLoader loader) {
        return pkg.contains("incubator")
                ? mavenVersion(loader, "io.netty.incubator", "netty-incubator-codec-classes-quic", pkg + ".QuicheQuicChannel")
                : mavenVersion(loader, "io.netty", "netty-codec-classes-quic", pkg + ".QuicheQuicChannel");
    }

    @Override
    protected List<TypeInstrumentation> typeInstrumentations() {
        return List.of(new QuicheConfigInstrumentation(pkg), new QuicheServerCodecInstrumentation(pkg),
                new QuicheChannelInstrumentation(pkg), new QuicheConnectionInstrumentation(pkg),
                new QuicheCodecInstrumentation(pkg));
    }

    /** Classes in a named module (Netty on the module path) are left alone: the hooks need reflective access to package-private natives. */
    @Override
    protected boolean unnamedModulesOnly() {
        return true;
    }

    /**
     * The class-loader linkage check: where Netty's loader is not the agent's, the helpers are defined
     * in it and verified ({@link NettyLinkage#prepare}). Never a reason to skip the module: the
     * algorithm choice runs in every loader that sees the agent.
     */
    @Override
    protected String link(ClassLoader loader) {
        NettyLinkage.prepare(loader);
        return null;
    }

    /** "applied" when every feature runs in that loader; else which run and why the others do not. */
    @Override
    protected String appliedVerdict(ClassLoader loader) {
        String limitation = NettyLinkage.prepare(loader);
        return limitation == null ? "applied" : "applied: the algorithm choice only; " + NettyLinkage.SKIPPED_FEATURES
                + " are skipped there: " + limitation;
    }

    @Override
    protected void onApplied(ClassLoader loader, String version) {
        AgentLog.debug("netty: " + pkg + " instrumented" + (version != null ? " (" + version + ")" : ""));
        // attach and status show it beside the verdict: what happens to configs the agent did not see built
        String late = "netty " + pkg + ": " + NettyConfigLayout.lateConfigsVerdict();
        AgentLog.info(late);
        dev.ccagent.agent.runtime.AgentRuntime.recordModule(late);
    }
}
