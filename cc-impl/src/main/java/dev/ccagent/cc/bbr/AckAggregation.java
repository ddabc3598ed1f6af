package dev.ccagent.cc.bbr;

/**
 * Ack-aggregation ("extra acked") estimation, after draft-ietf-ccwg-bbr
 * ({@code BBRUpdateACKAggregation}) and quiche's {@code MaxAckHeightTracker}: within an
 * aggregation epoch, how many more bytes were acknowledged than the bandwidth estimate explains.
 * An epoch restarts whenever the ACKed bytes fall back to what the estimate predicts. The result
 * is kept in a windowed max filter over rounds and added to the congestion window, so that a path
 * that delivers ACKs in bursts (Wi-Fi, GRO, delayed ACKs) does not starve the sender between them.
 */
public final class AckAggregation {

    private final WindowedFilter filter;
    private long epochStart = Long.MIN_VALUE;
    private long epochDelivered;
    private long lastExtra;

    /** @param windowRounds length of the max filter in rounds (10 in quiche and the draft) */
    public AckAggregation(long windowRounds) {
        filter = WindowedFilter.max(windowRounds);
    }

    /**
     * @param bandwidth   current bandwidth estimate, bytes/s
     * @param now         ACK time
     * @param newlyAcked  bytes newly acknowledged by this ACK
     * @param round       current round count
     * @param cap         upper bound for one extra-acked sample (the draft uses cwnd)
     * @return this ACK's extra-acked sample
     */
    public long onAck(long bandwidth, long now, long newlyAcked, long round, long cap) {
        if (newlyAcked <= 0) {
            return 0;
        }
        long expected = 0;
        if (epochStart != Long.MIN_VALUE) {
            long interval = Math.max(0, now - epochStart);
            expected = (long) ((double) bandwidth * interval / 1e9);
        }
        if (epochStart == Long.MIN_VALUE || epochDelivered <= expected) {
            // ACKs are arriving no faster than the estimate: start a new epoch here.
            epochDelivered = 0;
            epochStart = now;
            expected = 0;
        }
        epochDelivered += newlyAcked;
        long extra = Math.max(0, Math.min(epochDelivered - expected, cap));
        filter.update(extra, round);
        lastExtra = extra;
        return extra;
    }

    /** Changes the max filter's window (1 round in STARTUP, 10 after, per draft UpdateACKAggregation). */
    public void setWindowRounds(long windowRounds) {
        if (filter.windowLength() != windowRounds) {
            filter.setWindowLength(windowRounds);
        }
    }

    /** Restarts the aggregation epoch at {@code now} (e.g. when sending resumes after idle). */
    public void restartEpoch(long now) {
        epochStart = now;
        epochDelivered = 0;
    }

    /** Forgets the history. */
    public void reset() {
        filter.clear();
        epochStart = Long.MIN_VALUE;
        epochDelivered = 0;
        lastExtra = 0;
    }

    /** The max extra-acked over the filter window, bytes. */
    public long extraAcked() {
        return filter.best();
    }

    public long lastSample() {
        return lastExtra;
    }
}
