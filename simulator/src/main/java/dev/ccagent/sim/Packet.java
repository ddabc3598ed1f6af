package dev.ccagent.sim;

/** A datagram of one flow on its way through the bottleneck to the receiver. */
final class Packet {
    final FlowSender flow;
    final long number;
    final long sentTime;
    final int size;
    final int payload;
    final boolean ackEliciting;
    long enqueuedAt;
    long queueDelay;
    boolean acked;
    boolean lost;
    boolean sentInStartup;

    Packet(FlowSender flow, long number, long sentTime, int size, int payload, boolean ackEliciting) {
        this.flow = flow;
        this.number = number;
        this.sentTime = sentTime;
        this.size = size;
        this.payload = payload;
        this.ackEliciting = ackEliciting;
    }
}
