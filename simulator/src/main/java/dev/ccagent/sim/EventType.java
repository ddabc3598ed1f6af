package dev.ccagent.sim;

/** What a {@link ScheduledEvent} does when its time comes. */
enum EventType {
    /** A flow starts sending. */
    START,
    /** The pacer's next send time has come. */
    SENDER_WAKE,
    /** A packet has been serialised onto the bottleneck. */
    LINK_DEPART,
    /** A packet reaches the receiver. */
    DATA_ARRIVE,
    /** The receiver's max_ack_delay timer. */
    ACK_TIMER,
    /** An ACK frame reaches the sender. */
    ACK_ARRIVE,
    /** The sender's loss-detection / PTO timer. */
    LOSS_TIMER,
    /** The bottleneck rate changes (payload: the rate change). */
    RATE_CHANGE,
    /** The observer gets a state sample of every running flow. */
    SAMPLE,
    /** The return path releases the ACKs it held back. */
    AGGREGATION_RELEASE,
    /** The application writes more bytes into a flow. */
    APP_WRITE
}
