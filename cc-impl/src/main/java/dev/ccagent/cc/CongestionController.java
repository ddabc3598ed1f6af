package dev.ccagent.cc;

/**
 * A congestion controller, independent of any QUIC stack.
 *
 * <p>The host stack feeds it events (packet sent, ack, loss, application limited) and asks it
 * whether it may send, how fast, and when the next packet may leave. All times are nanoseconds on
 * the host's {@link NanoClock}; all sizes are bytes; rates are bytes per second.
 *
 * <p>Threading: implementations are not thread-safe; the host serialises calls (the kwik adapter
 * does so with a lock). Every per-packet and per-ack method must allocate nothing.
 *
 * <p>Bytes in flight are counted by the host (it knows about discarded packet number spaces and
 * retransmissions); the controller is told the figure with each event.
 */
public interface CongestionController {

    /** The registry name of the algorithm, e.g. {@code "newreno"}. */
    String algorithm();

    /**
     * A packet has been sent.
     *
     * @param sentTimeNanos when it left
     * @param packetNumber its packet number (monotonic across the connection's spaces as the host sees them)
     * @param bytes its size on the wire
     * @param bytesInFlight bytes in flight after this packet was counted
     * @param ackEliciting false for ACK-only (and padding-only) packets, which are not in flight
     */
    void onPacketSent(long sentTimeNanos, long packetNumber, int bytes, long bytesInFlight, boolean ackEliciting);

    /** Packets were newly acknowledged. The event is reused by the host: do not keep it. */
    void onAck(AckEvent ack);

    /** Packets were declared lost. The event is reused by the host: do not keep it. */
    void onPacketsLost(LossEvent loss);

    /**
     * The sender has nothing more to send right now although the window would allow it.
     * Bandwidth samples taken while application limited must not shrink estimates, and loss-based
     * windows must not grow on them (RFC 9002 §7.8).
     */
    void onAppLimited(long timeNanos, long bytesInFlight);

    /** The congestion window in bytes. */
    long congestionWindow();

    /**
     * Whether the window leaves room for another packet with this many bytes in flight. Hosts ask
     * this before {@link #earliestSendTime}: a "no" also tells the pacer that the sender is
     * window-limited, not waiting for it.
     */
    default boolean canSend(long bytesInFlight) {
        return bytesInFlight < congestionWindow();
    }

    /** The pacing rate in bytes per second; always positive. */
    long pacingRate();

    /**
     * The earliest time the next packet of {@code packetBytes} may leave. Never earlier than
     * {@code nowNanos}; exactly {@code nowNanos} only when the pacer has budget for the packet.
     */
    long earliestSendTime(long nowNanos, int packetBytes);

    /** Copies the controller's state into {@code into} (allocation free) and returns it. */
    CcSnapshot snapshot(CcSnapshot into);
}
