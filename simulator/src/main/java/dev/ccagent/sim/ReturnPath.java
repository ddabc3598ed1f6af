package dev.ccagent.sim;

import java.util.ArrayDeque;

/**
 * The ACK path from the receivers back to the senders: one-way propagation (RTT − RTT/2), never
 * lossy, with optional ACK aggregation (ACKs held until enough newly acknowledged bytes have
 * gathered or a time has passed since the first held one).
 */
final class ReturnPath {
    private final SimulationConfig config;
    private final EventQueue events;
    /** The rest of the round trip after the bottleneck direction's one-way delay. */
    private final long delayNanos;

    private final ArrayDeque<AckFrame> heldAcks = new ArrayDeque<>();
    private long heldAckBytes;
    private boolean releaseScheduled;

    ReturnPath(SimulationConfig config, EventQueue events) {
        this.config = config;
        this.events = events;
        this.delayNanos = config.rttNanos - config.link.delayNanos();
    }

    /** A receiver sends an ACK frame now. */
    void send(AckFrame ack) {
        long now = events.now();
        if (config.ackAggregationBytes <= 0) {
            events.schedule(now + delayNanos, EventType.ACK_ARRIVE, ack.flow, ack);
            return;
        }
        heldAcks.addLast(ack);
        heldAckBytes += ack.ackedBytes;
        if (heldAckBytes >= config.ackAggregationBytes) {
            releaseHeldAcks();
        } else if (!releaseScheduled) {
            releaseScheduled = true;
            events.schedule(now + config.ackAggregationNanos, EventType.AGGREGATION_RELEASE, -1, null);
        }
    }

    /** The aggregation timer fired. */
    void onReleaseTimer() {
        releaseScheduled = false;
        releaseHeldAcks();
    }

    private void releaseHeldAcks() {
        long arrive = events.now() + delayNanos;
        while (!heldAcks.isEmpty()) {
            AckFrame a = heldAcks.pollFirst();
            events.schedule(arrive, EventType.ACK_ARRIVE, a.flow, a);
        }
        heldAckBytes = 0;
    }
}
