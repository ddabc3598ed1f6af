package dev.ccagent.agent.netty;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.instrument.TargetLibrary;
import dev.ccagent.agent.instrument.TargetModule;

import java.util.ArrayList;
import java.util.List;

/**
 * Netty QUIC: one module per package, Netty 4.2.x ({@code io.netty.handler.codec.quic}) and the incubator 0.0.x;
 * and, with spin detection on, where one cannot apply, observe-only for that package ({@link NettyObserveModule}).
 */
public final class NettyLibrary implements TargetLibrary {

    @Override
    public String name() {
        return "netty";
    }

    @Override
    public List<TargetModule> modules(AgentConfig config) {
        NettyModule netty42 = NettyModule.netty42(config);
        NettyModule incubator = NettyModule.incubator(config);
        List<TargetModule> modules = new ArrayList<>(List.of(netty42, incubator));
        if (config.detect()) {
            // where a module cannot apply: the spin monitor, with its own requirements
            modules.add(new NettyObserveModule(netty42));
            modules.add(new NettyObserveModule(incubator));
        }
        return modules;
    }
}
