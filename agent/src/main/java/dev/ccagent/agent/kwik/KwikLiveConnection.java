package dev.ccagent.agent.kwik;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.detect.SendTelemetry;
import dev.ccagent.cc.CcSnapshot;

/**
 * A live kwik connection as the rest of the agent sees it (JFR polling, the spin detector, status),
 * without kwik's types: the adapter that implements it may be defined in kwik's own class loader
 * (see {@link KwikLinkage}), where the agent's loader cannot name its class.
 */
public interface KwikLiveConnection {

    SendTelemetry telemetry();

    String algorithm();

    AgentConfig.Arm arm();

    CcSnapshot snapshot(CcSnapshot into);

    long getWindowSize();

    long getBytesInFlight();

    /**
     * Detach: hands the connection to kwik's own controller (our bytes in flight go with it); true when
     * it was ours until now. Never throws.
     */
    boolean switchToStock();
}
