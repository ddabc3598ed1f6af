package dev.ccagent.cc;

/** Packets declared lost (RFC 9002 §6), and whether they establish persistent congestion (§7.6). */
public final class LossEvent extends PacketBatch {

    /** The host established persistent congestion with this loss. */
    public boolean persistentCongestion;

    public LossEvent() {
        super(32);
    }

    /** Resets every field for reuse. */
    public LossEvent reset(long timeNanos, long priorBytesInFlight) {
        startEvent(timeNanos, priorBytesInFlight);
        persistentCongestion = false;
        return this;
    }
}
