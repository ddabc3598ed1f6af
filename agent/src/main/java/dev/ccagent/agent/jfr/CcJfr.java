package dev.ccagent.agent.jfr;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.connection.SendTelemetry;
import dev.ccagent.cc.CcSnapshot;
import dev.ccagent.cc.CongestionController;
import dev.ccagent.jfr.AgentLifecycle;
import dev.ccagent.jfr.AlgorithmAssigned;
import dev.ccagent.jfr.CongestionState;
import dev.ccagent.jfr.JfrSwitch;
import dev.ccagent.jfr.PacingRateChange;
import dev.ccagent.jfr.PacingStall;

/**
 * Where the agent writes its JFR events. Every method returns at once when no recording runs
 * ({@link JfrSwitch#on} is false): no event object is created, nothing is allocated. Every method
 * swallows its own failures: an event must never break a connection.
 */
public final class CcJfr {

    /** Relative change of pacing rate or quantum that makes a PacingRateChange event. */
    public static final double PACING_CHANGE_THRESHOLD = 0.10;
    /** A pacer wait counts as a stall when longer than twice the announced wait plus this slack. */
    public static final long STALL_SLACK_NANOS = 2_000_000L;

    private static final String VERSION = version();

    private CcJfr() {
    }

    private static String version() {
        String v = CcJfr.class.getPackage() != null ? CcJfr.class.getPackage().getImplementationVersion() : null;
        return v != null ? v : "dev";
    }

    public static void lifecycle(String action, String library, String libraryVersion, String detail) {
        if (!JfrSwitch.on) {
            return;
        }
        try {
            AgentLifecycle e = new AgentLifecycle();
            if (e.shouldCommit()) {
                e.action = action;
                e.library = library;
                e.libraryVersion = libraryVersion;
                e.detail = detail;
                e.agentVersion = VERSION;
                e.commit();
            }
        } catch (Throwable ignored) {
            // never break the host
        }
    }

    public static void algorithmAssigned(String library, String connectionId, String role, AgentConfig.Arm arm,
                                         String reason) {
        if (!JfrSwitch.on || arm == null) {
            return;
        }
        String why = reason != null ? reason
                : "canary".equals(arm.label()) ? "canary share " + arm.percent() + "% of new connections"
                : "default arm (" + arm.percent() + "% of new connections)";
        algorithmAssigned(library, connectionId, role,
                reason != null && reason.startsWith("fallback") ? AgentConfig.STOCK : arm.algorithm(),
                arm.options() != null ? optionsText(arm.options().given()) : "", arm.label(), why);
    }

    /** {@code KEY=VALUE} pairs, comma separated, as the event's field documents. */
    static String optionsText(java.util.Map<String, String> given) {
        StringBuilder b = new StringBuilder();
        given.forEach((k, v) -> b.append(b.length() == 0 ? "" : ",").append(k).append('=').append(v));
        return b.toString();
    }

    /**
     * An assignment with every field given by the caller (libraries whose algorithms are not ours,
     * e.g. quiche inside Netty QUIC).
     */
    public static void algorithmAssigned(String library, String connectionId, String role, String algorithm,
                                         String options, String canaryArm, String reason) {
        if (!JfrSwitch.on) {
            return;
        }
        try {
            AlgorithmAssigned e = new AlgorithmAssigned();
            if (e.shouldCommit()) {
                e.library = library;
                e.connectionId = connectionId;
                e.role = role;
                e.algorithm = algorithm;
                e.options = options;
                e.canaryArm = canaryArm;
                e.reason = reason;
                e.commit();
            }
        } catch (Throwable ignored) {
            // never break the host
        }
    }

    /**
     * A periodic CongestionState from a library's own statistics (Netty QUIC's path stats): fields the
     * library does not report stay 0. Returns at once while no recording runs.
     */
    public static void externalState(String library, String connectionId, String canaryArm, String algorithm,
                                     String mode, long cwnd, long smoothedRttNanos, long deliveryRate,
                                     long packetsLost) {
        if (!JfrSwitch.on) {
            return;
        }
        try {
            CongestionState e = new CongestionState();
            if (e.shouldCommit()) {
                e.library = library;
                e.connectionId = connectionId;
                e.canaryArm = canaryArm;
                e.algorithm = algorithm;
                e.mode = mode;
                e.trigger = "periodic";
                e.weight = 1; // one event a connection per netty.stats.period: not sampled
                e.probeBwPhase = -1;
                e.congestionWindow = Math.max(0, cwnd);
                e.smoothedRtt = Math.max(0, smoothedRttNanos);
                e.bandwidthEstimate = Math.max(0, deliveryRate);
                e.packetsLost = Math.max(0, packetsLost);
                e.commit();
            }
        } catch (Throwable ignored) {
            // never break the host
        }
    }

    /**
     * After our controller handled an ACK or a loss (caller holds the connection's lock): a
     * CongestionState on a mode change, a PacingRateChange when rate or quantum moved by more than
     * {@link #PACING_CHANGE_THRESHOLD}.
     */
    public static void afterUpdate(SendTelemetry t, CongestionController cc, long bytesInFlight, AgentConfig.Arm arm) {
        if (!JfrSwitch.on) {
            return;
        }
        try {
            CcSnapshot s = cc.snapshot(t.scratch);
            s.bytesInFlight = bytesInFlight;
            if (t.lastMode != null && s.mode != t.lastMode) {
                congestionState(t, s.algorithm, arm, s, s.congestionWindow, bytesInFlight, "mode change", 1);
            }
            t.lastMode = s.mode;
            if (t.lastPacingRate < 0) {
                t.lastPacingRate = s.pacingRate;
                t.lastPacingQuantum = s.pacingQuantum;
            } else if (changed(t.lastPacingRate, s.pacingRate) || changed(t.lastPacingQuantum, s.pacingQuantum)) {
                PacingRateChange e = new PacingRateChange();
                if (e.shouldCommit()) {
                    e.library = t.library();
                    e.connectionId = t.connectionId();
                    e.algorithm = s.algorithm;
                    e.previousRate = t.lastPacingRate;
                    e.rate = s.pacingRate;
                    e.previousQuantum = t.lastPacingQuantum;
                    e.quantum = s.pacingQuantum;
                    e.rateChange = t.lastPacingRate > 0 ? (double) (s.pacingRate - t.lastPacingRate) / t.lastPacingRate : 0;
                    e.commit();
                }
                t.lastPacingRate = s.pacingRate;
                t.lastPacingQuantum = s.pacingQuantum;
            }
        } catch (Throwable ignored) {
            // never break the host
        }
    }

    private static boolean changed(long before, long now) {
        if (before == now) {
            return false;
        }
        long base = Math.max(1, Math.abs(before));
        return Math.abs(now - before) > PACING_CHANGE_THRESHOLD * base;
    }

    /** The pacer let a packet go after holding the sender {@code held} ns; it had announced {@code announced}. */
    public static void maybePacingStall(SendTelemetry t, CongestionController cc, long held, long announced) {
        if (!JfrSwitch.on || held <= 2 * announced + STALL_SLACK_NANOS) {
            return;
        }
        try {
            PacingStall e = new PacingStall();
            if (e.shouldCommit()) {
                e.library = t.library();
                e.connectionId = t.connectionId();
                e.algorithm = cc.algorithm();
                e.waitTime = held;
                e.expectedWait = announced;
                e.pacingRate = Math.max(0, cc.pacingRate());
                e.commit();
            }
        } catch (Throwable ignored) {
            // never break the host
        }
    }

    /**
     * Writes one CongestionState. {@code s} is null for a connection on the library's stock controller;
     * {@code weight} is the connections the event stands for (1 unless the periodic events are a sample).
     */
    public static void congestionState(SendTelemetry t, String algorithm, AgentConfig.Arm arm, CcSnapshot s,
                                       long cwnd, long bytesInFlight, String trigger, double weight) {
        CongestionState e = new CongestionState();
        if (!e.shouldCommit()) {
            return;
        }
        e.library = t.library();
        e.connectionId = t.connectionId();
        e.canaryArm = arm != null ? arm.label() : "";
        e.algorithm = algorithm;
        e.trigger = trigger;
        e.weight = weight;
        e.congestionWindow = Math.max(0, cwnd);
        e.bytesInFlight = Math.max(0, bytesInFlight);
        if (s != null) {
            e.mode = s.mode.label();
            e.probeBwPhase = s.probeBwPhase;
            e.slowStartThreshold = s.slowStartThreshold == Long.MAX_VALUE ? 0 : Math.max(0, s.slowStartThreshold);
            e.bandwidthEstimate = Math.max(0, s.bandwidthEstimate);
            e.pacingRate = Math.max(0, s.pacingRate);
            e.pacingQuantum = Math.max(0, s.pacingQuantum);
            e.minRtt = Math.max(0, s.minRttNanos);
            e.smoothedRtt = Math.max(0, s.smoothedRttNanos);
            e.packetsLost = s.packetsLost;
            e.congestionEvents = s.congestionEvents;
            e.bytesAcked = s.bytesAcked;
            e.pacingGain = s.pacingGain;
            e.cwndGain = s.cwndGain;
        } else {
            e.mode = "";
            e.probeBwPhase = -1;
        }
        e.commit();
    }
}
