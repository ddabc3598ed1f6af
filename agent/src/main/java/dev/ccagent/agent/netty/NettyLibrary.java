package dev.ccagent.agent.netty;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.instrument.TargetLibrary;
import dev.ccagent.agent.instrument.TargetModule;

import java.util.List;

/** Netty QUIC: one module per package, Netty 4.2.x ({@code io.netty.handler.codec.quic}) and the incubator 0.0.x. */
public final class NettyLibrary implements TargetLibrary {

    @Override
    public String name() {
        return "netty";
    }

    @Override
    public List<TargetModule> modules(AgentConfig config) {
        return List.of(NettyModule.netty42(config), NettyModule.incubator(config));
    }
}
