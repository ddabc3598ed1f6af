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
        final byte[] connectionId;

        Choice(AgentConfig.Arm arm, CongestionController controller, byte[] connectionId) {
            this.arm = arm;
            this.controller = controller;
            this.connectionId = connectionId;
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

    /**
     * Decides the connection's arm and makes its controller; counts and records nothing, because the
     * connection may still end up on kwik's controller (a failed swap): {@link #runs} or
     * {@link #runsStockInstead} says which.
     */
    Choice choose(byte[] connectionId, int maxPacketSize) {
        // the guard sends a rolled-back canary arm's share to the default arm
        AgentConfig.Arm arm = Guard.redirect("kwik", config,
                AlgorithmSelector.select(config, AlgorithmSelector.hash(config, connectionId)));
        return new Choice(arm, ControllerFactory.create(arm, maxPacketSize, KWIK_QUANTUM_RATIO), connectionId);
    }

    /**
     * The connection runs its arm's algorithm (or kwik's controller on a stock arm): counted under the
     * arm ({@code status}), recorded (AlgorithmAssigned) and logged at debug.
     */
    void runs(Choice c) {
        AgentConfig.Arm arm = c.arm;
        AgentRuntime.countConnection("kwik", arm);
        KwikTelemetry.assigned(role, c.connectionId, arm);
        if (AgentLog.enabled(AgentLog.Level.DEBUG)) {
            AgentLog.debug("kwik " + role + " connection " + hex(c.connectionId) + ": " + arm.label() + " arm, "
                    + arm.algorithm() + (arm.options() != null ? " " + arm.options() : ""));
        }
    }

    /**
     * The connection was chosen for {@code c}'s arm but runs kwik's own controller from its start
     * ({@code why}: "swap failed"): counted as what ran ({@code kwik default:bbr1 ran stock (swap failed)}),
     * never under the arm, and recorded (AlgorithmAssigned with algorithm stock) unless
     * {@code recorded} (the fallback's own event said it already).
     */
    void runsStockInstead(Choice c, String why, Throwable cause, boolean recorded) {
        AgentConfig.Arm arm = c.arm;
        if (arm.isStock()) { // a stock arm that was to be observed only: it runs what it was chosen for
            if (recorded) {
                AgentRuntime.countConnection("kwik", arm);
            } else {
                runs(c);
            }
            return;
        }
        AgentRuntime.countConnection("kwik", arm.label() + ":" + arm.algorithm() + " ran " + AgentConfig.STOCK
                + " (" + why + ")");
        if (!recorded) {
            KwikTelemetry.ranStockInstead(role, c.connectionId, arm, why, cause);
        }
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
