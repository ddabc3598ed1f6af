package dev.ccagent.cc;

/**
 * Newly acknowledged packets plus the RTT figures the host holds after processing the ACK frame.
 * RTT fields are nanoseconds; {@code latestRttNanos} is {@code 0} when this ACK produced no RTT
 * sample (its largest acknowledged packet was not newly acknowledged, RFC 9002 §5.1).
 */
public final class AckEvent extends PacketBatch {

    /** Latest RTT sample, or 0 when this ACK gave none. */
    public long latestRttNanos;
    /** Smoothed RTT after this sample (RFC 9002 §5.3), or 0 when the host has none yet. */
    public long smoothedRttNanos;
    /** Minimum RTT seen so far, or 0 when the host has none yet. */
    public long minRttNanos;
    /** RTT variation after this sample. */
    public long rttVarianceNanos;
    /** Ack delay the peer reported in the ACK frame. */
    public long ackDelayNanos;

    public AckEvent() {
        super(64);
    }

    /** Resets every field for reuse. */
    public AckEvent reset(long timeNanos, long priorBytesInFlight) {
        startEvent(timeNanos, priorBytesInFlight);
        latestRttNanos = 0;
        smoothedRttNanos = 0;
        minRttNanos = 0;
        rttVarianceNanos = 0;
        ackDelayNanos = 0;
        return this;
    }

    /** Copies the RTT figures from an estimator. */
    public AckEvent rtt(RttEstimator rtt, boolean newSample) {
        latestRttNanos = newSample ? rtt.latestRtt() : 0;
        smoothedRttNanos = rtt.smoothedRtt();
        minRttNanos = rtt.minRtt();
        rttVarianceNanos = rtt.rttVariance();
        return this;
    }
}
