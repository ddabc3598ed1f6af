package dev.ccagent.sim;

import dev.ccagent.cc.CcSnapshot;
import dev.ccagent.cc.CongestionMode;

/** Watches a simulation: periodic state samples and per-packet fates. All methods optional. */
public interface SimulationObserver {

    SimulationObserver NONE = new SimulationObserver() {
    };

    /**
     * A periodic sample of one flow (every sample interval while the flow is active).
     *
     * @param snapshot reused between calls: copy what you keep
     * @param queueBytes bytes waiting in the bottleneck queue (all flows)
     * @param latestRttNanos the flow's latest RTT sample (0 before the first)
     */
    default void onSample(long nowNanos, int flow, CcSnapshot snapshot, long queueBytes, long latestRttNanos) {
    }

    /** A packet left the sender. */
    default void onPacketSent(long nowNanos, int flow, long packetNumber, int bytes, CongestionMode mode) {
    }

    /** The sender declared a packet lost. */
    default void onPacketLost(long nowNanos, int flow, long packetNumber, CongestionMode mode) {
    }

    /** A packet reached the receiver after waiting {@code queueDelayNanos} in the bottleneck queue. */
    default void onPacketDelivered(long nowNanos, int flow, long packetNumber, long queueDelayNanos) {
    }

    /** The flow's congestion mode changed. */
    default void onModeChange(long nowNanos, int flow, CongestionMode from, CongestionMode to) {
    }
}
