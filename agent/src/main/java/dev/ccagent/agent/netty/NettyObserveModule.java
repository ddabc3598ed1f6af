package dev.ccagent.agent.netty;

import dev.ccagent.agent.instrument.Requirement;
import dev.ccagent.agent.instrument.TargetModule;
import dev.ccagent.agent.instrument.TypeInstrumentation;

import java.util.List;

/**
 * Netty QUIC observe-only: where {@link NettyModule}'s requirements fail in a loader (a quiche native or
 * a private method it needs changed or gone, as a Netty version outside the gate may do), the CPU spin
 * monitor still watches that loader's QUIC connections. Its own requirement set is small and public
 * but for the anchor: {@code QuicheQuicChannel} (any constructor: to learn each new connection) implementing
 * {@code QuicChannel} with its {@code collectStats()}, {@code QuicConnectionStats.sent()/recv()}
 * and {@code Channel}'s {@code isOpen/isRegistered/eventLoop/localAddress}. The only advice is at the end of
 * {@code QuicheQuicChannel}'s constructors ({@link QuicheChannelObserveInstrumentation}) and records the
 * channel in a side table ({@link NettyObserveWatch}); Netty's behaviour is unchanged (no config, native or
 * send path is touched; one task a second per connection on its loop reads quiche's stats).
 *
 * <p>It stands aside in every loader where the module it backs up applies (that one watches its
 * connections itself, with the send-loop counters), and logs one line where it observes:
 * "... algorithm choice and pacing skipped (why); observing: spin monitor (...); Netty's behaviour unchanged".
 */
public final class NettyObserveModule extends TargetModule {

    private final NettyModule swap;

    public NettyObserveModule(NettyModule swap) {
        this.swap = swap;
    }

    @Override
    public String library() {
        return "netty";
    }

    @Override
    public String description() {
        return swap.description();
    }

    @Override
    protected List<Requirement> requirements() {
        String pkg = swap.pkg();
        String quicChannel = pkg + ".QuicChannel";
        return List.of(
                Requirement.type(pkg + ".QuicheQuicChannel").satisfies(type -> type.getInterfaces().asErasures()
                        .stream().anyMatch(i -> i.getName().equals(quicChannel)) ? null
                        : pkg + ".QuicheQuicChannel does not implement " + quicChannel),
                Requirement.type(quicChannel).method("collectStats", "()Lio/netty/util/concurrent/Future;"),
                Requirement.type(pkg + ".QuicConnectionStats").method("sent", "()J").method("recv", "()J"),
                Requirement.type("io.netty.channel.Channel")
                        .method("isOpen", "()Z").method("isRegistered", "()Z")
                        .method("eventLoop", "()Lio/netty/channel/EventLoop;")
                        .method("localAddress", "()Ljava/net/SocketAddress;"),
                // the advice's entry point must be reachable from Netty's class loader
                Requirement.agentType("dev.ccagent.agent.netty.NettyObserveWatch"));
    }

    @Override
    protected boolean standsAsideIn(ClassLoader loader) {
        return swap.appliesTo(loader);
    }

    @Override
    protected String appliedVerdict(ClassLoader loader) {
        return "algorithm choice and pacing skipped (" + String.join("; ", swap.missingIn(loader))
                + "); observing: spin monitor (each event loop's CPU time against its QUIC connections' packets from"
                + " quiche's stats: loop-level episodes); Netty's behaviour unchanged";
    }

    @Override
    protected String versionIn(ClassLoader loader) {
        return swap.versionIn(loader);
    }

    @Override
    protected List<TypeInstrumentation> typeInstrumentations() {
        return List.of(new QuicheChannelObserveInstrumentation(swap.pkg()));
    }

    /** As the module it backs up: classes in a named module (Netty on the module path) are left alone. */
    @Override
    protected boolean unnamedModulesOnly() {
        return true;
    }
}
