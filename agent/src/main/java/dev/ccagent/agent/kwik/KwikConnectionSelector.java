package dev.ccagent.agent.kwik;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.log.AgentLog;
import dev.ccagent.agent.measure.Guard;
import dev.ccagent.agent.runtime.AgentRuntime;
import dev.ccagent.agent.select.AlgorithmSelector;
import dev.ccagent.agent.select.ControllerFactory;
import dev.ccagent.cc.CongestionController;

/**
 * Chooses a kwik connection's arm from its original destination connection id (the same on both
 * ends), under the configuration that was current when the connection was created.
 */
final class KwikConnectionSelector {

    static final class Choice {
        final AgentConfig.Arm arm;
        final CongestionController controller;

        Choice(AgentConfig.Arm arm, CongestionController controller) {
            this.arm = arm;
            this.controller = controller;
        }
    }

    /**
     * kwik's pacer quantum unless the operator sets {@code quantum-ratio}: 2 ms of traffic. kwik
     * sends one blocking datagram at a time from a thread that the pacer must wake for every burst
     * (a "slow socket loop" in picoquic's terms), so twice the default quantum halves the wake-ups;
     * on loopback that kept BBR's CPU per MB near stock NewReno's.
     */
    static final double KWIK_QUANTUM_RATIO = 0.002;

    private final AgentConfig config;
    private final String role;

    KwikConnectionSelector(AgentConfig config, String role) {
        this.config = config;
        this.role = role;
    }

    /** Resolves the id now (the connection is running) and chooses. */
    Choice choose(Object sender, int maxPacketSize) {
        return choose(KwikReflection.connectionIdOfSender(sender), maxPacketSize); // unknown: hash of nothing
    }

    Choice choose(byte[] connectionId, int maxPacketSize) {
        // the guard sends a rolled-back canary arm's share to the default arm
        AgentConfig.Arm arm = Guard.redirect("kwik", config,
                AlgorithmSelector.select(config, AlgorithmSelector.hash(config, connectionId)));
        CongestionController cc = ControllerFactory.create(arm, maxPacketSize, KWIK_QUANTUM_RATIO);
        AgentRuntime.countConnection("kwik", arm);
        KwikTelemetry.assigned(role, connectionId, arm);
        if (AgentLog.enabled(AgentLog.Level.DEBUG)) {
            AgentLog.debug("kwik " + role + " connection " + hex(connectionId) + ": " + arm.label() + " arm, "
                    + arm.algorithm() + (arm.options() != null ? " " + arm.options() : ""));
        }
        return new Choice(arm, cc);
    }

    static String hex(byte[] id) {
        if (id == null) {
            return "(unknown id)";
        }
        StringBuilder sb = new StringBuilder(id.length * 2);
        for (byte b : id) {
            sb.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
        }
        return sb.toString();
    }
}
