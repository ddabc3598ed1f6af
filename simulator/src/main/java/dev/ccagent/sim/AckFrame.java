package dev.ccagent.sim;

/** An ACK frame: the packet numbers received since the receiver's previous ACK (ACKs are never lost). */
final class AckFrame {
    final int flow;
    final long[] packetNumbers;
    final long largest;
    final long ackDelay;
    final long ackedBytes;

    AckFrame(int flow, long[] packetNumbers, long largest, long ackDelay, long ackedBytes) {
        this.flow = flow;
        this.packetNumbers = packetNumbers;
        this.largest = largest;
        this.ackDelay = ackDelay;
        this.ackedBytes = ackedBytes;
    }
}
