package dev.ccagent.cc;

/**
 * RTT estimation per RFC 9002 §5 in nanoseconds: min RTT, smoothed RTT, RTT variation, and the
 * probe timeout. Hosts that keep coarse RTTs (kwik keeps milliseconds) can use this to compute
 * precise figures from their own timestamps.
 */
public final class RttEstimator {

    /** kGranularity, RFC 9002 §6.1.2. */
    public static final long GRANULARITY_NANOS = 1_000_000L;

    private final long initialRttNanos;
    private long latestRtt;
    private long minRtt;
    private long smoothedRtt;
    private long rttVariance;
    private boolean hasSample;

    public RttEstimator(long initialRttNanos) {
        if (initialRttNanos <= 0) {
            throw new IllegalArgumentException("initial RTT must be positive: " + initialRttNanos);
        }
        this.initialRttNanos = initialRttNanos;
        reset();
    }

    public void reset() {
        latestRtt = 0;
        minRtt = 0;
        smoothedRtt = initialRttNanos;
        rttVariance = initialRttNanos / 2;
        hasSample = false;
    }

    /**
     * Adds an RTT sample (RFC 9002 §5.3). Samples of 0 or less are clamped to 1 ns: on loopback an
     * ack can arrive within the clock's resolution.
     *
     * @param ackDelayNanos the peer's ack delay, already limited to max_ack_delay by the caller once
     *                      the handshake is confirmed
     */
    public void onSample(long sampleNanos, long ackDelayNanos) {
        long sample = Math.max(1, sampleNanos);
        latestRtt = sample;
        if (!hasSample) {
            hasSample = true;
            minRtt = sample;
            smoothedRtt = sample;
            rttVariance = sample / 2;
            return;
        }
        minRtt = Math.min(minRtt, sample);
        long adjusted = sample;
        if (sample >= minRtt + Math.max(0, ackDelayNanos)) {
            adjusted = sample - Math.max(0, ackDelayNanos);
        }
        rttVariance = (3 * rttVariance + Math.abs(smoothedRtt - adjusted)) / 4;
        smoothedRtt = (7 * smoothedRtt + adjusted) / 8;
    }

    public boolean hasSample() {
        return hasSample;
    }

    public long latestRtt() {
        return latestRtt;
    }

    /** Minimum RTT, or 0 before the first sample. */
    public long minRtt() {
        return minRtt;
    }

    /** Smoothed RTT; the initial RTT before the first sample. */
    public long smoothedRtt() {
        return smoothedRtt;
    }

    public long rttVariance() {
        return rttVariance;
    }

    /** PTO duration without exponential backoff (RFC 9002 §6.2.1). */
    public long probeTimeout(long maxAckDelayNanos) {
        return smoothedRtt + Math.max(4 * rttVariance, GRANULARITY_NANOS) + maxAckDelayNanos;
    }

    /** The loss time threshold: 9/8 × max(smoothed RTT, latest RTT), at least kGranularity. */
    public long lossDelay() {
        long base = Math.max(smoothedRtt, latestRtt);
        return Math.max(base + base / 8, GRANULARITY_NANOS);
    }
}
