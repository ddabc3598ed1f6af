package dev.ccagent.agent.kwik;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.instrument.TargetLibrary;
import dev.ccagent.agent.instrument.TargetModule;

import java.util.ArrayList;
import java.util.List;

/** kwik ({@code tech.kwik:kwik} 0.10.x): the controller swap, and where it cannot apply, observe-only and the stream-stall fix. */
public final class KwikLibrary implements TargetLibrary {

    @Override
    public String name() {
        return "kwik";
    }

    @Override
    public List<TargetModule> modules(AgentConfig config) {
        List<TargetModule> modules = new ArrayList<>();
        KwikModule kwik = new KwikModule(config);
        modules.add(kwik);
        // where the swap cannot apply: each feature that needs no swap, with its own requirements
        if (config.detect()) {
            modules.add(new KwikObserveModule(config, kwik));
        }
        if (config.fixKwikStreamStall()) {
            modules.add(new KwikStreamStallFixModule(kwik));
        }
        if (config.fixKwikLossTimer()) {
            modules.add(new KwikLossTimerFixModule());
        }
        return modules;
    }
}
