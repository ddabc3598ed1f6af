package dev.ccagent.cc.pacing;

/**
 * Departure times of packets sent at a rate (an earliest-departure-time schedule, as Linux stamps
 * TCP packets for its fq scheduler): each packet leaves when the one before it has had its
 * {@code bytes / rate} of the link, and never before now. A sender that fell behind (a late timer)
 * may catch up by at most {@link #catchUpNanos} of sending: time it did not use beyond that is gone,
 * so an idle sender starts again without a burst. A departure never lies more than {@link #maxLeadNanos}
 * after the time it was scheduled at (a gap longer than that, from a rate near zero, is cut to it): a
 * host that holds a packet until its time holds it at most that long.
 *
 * <p>A rate of 0 means "not paced": the packet is due now and leaves no gap behind it.
 * Allocation free; not thread-safe.
 */
public final class RateDepartures {

    private final long catchUpNanos;
    private final long maxLeadNanos;
    private long next;
    private boolean started;

    /**
     * @param catchUpNanos how far behind now the schedule may stay (a bounded burst after a late wake-up)
     * @param maxLeadNanos how far after now a departure may lie at most (positive)
     */
    public RateDepartures(long catchUpNanos, long maxLeadNanos) {
        if (catchUpNanos < 0) {
            throw new IllegalArgumentException("catch-up must not be negative: " + catchUpNanos);
        }
        if (maxLeadNanos <= 0) {
            throw new IllegalArgumentException("the longest lead must be positive: " + maxLeadNanos);
        }
        this.catchUpNanos = catchUpNanos;
        this.maxLeadNanos = maxLeadNanos;
    }

    /** The departure time of the next packet: the end of the previous one's gap, or now when that has passed. */
    public long next(long now) {
        return started && next - now > 0 ? next : now;
    }

    /**
     * The packet {@link #next} just timed, {@code bytes} long, was handed on with the rate in force
     * (bytes per second): the next one leaves after its gap. The gap is counted from where the
     * schedule stood, or from {@code now − catchUpNanos} when it fell further behind than that, and ends
     * at most {@code maxLeadNanos} after now.
     */
    public void sent(long now, int bytes, long bytesPerSecond) {
        if (bytesPerSecond <= 0) {
            started = false;
            return;
        }
        long base = started ? Math.max(next, now - catchUpNanos) : now;
        long gap = (long) (Math.max(0, bytes) * 1e9 / bytesPerSecond); // at most 2^31 s of a 1 B/s rate: no overflow
        next = now + Math.min(base - now + gap, maxLeadNanos);
        started = true;
    }
}
