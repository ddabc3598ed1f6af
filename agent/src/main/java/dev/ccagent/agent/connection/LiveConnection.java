package dev.ccagent.agent.connection;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.cc.CcSnapshot;

/**
 * A live connection as the agent's core sees it (JFR polling, the spin detector, detach, status),
 * without any library's types: the adapter that implements it belongs to a target library's package
 * and may be defined in that library's own class loader (kwik's {@code KwikLinkage}), where the
 * agent's loader cannot name its class. The core never names a target library.
 */
public interface LiveConnection {

    SendTelemetry telemetry();

    String algorithm();

    AgentConfig.Arm arm();

    CcSnapshot snapshot(CcSnapshot into);

    long getWindowSize();

    long getBytesInFlight();

    /**
     * Detach: hands the connection to the library's own controller (our bytes in flight go with it); true when
     * it was ours until now. Never throws.
     */
    boolean switchToStock();
}
