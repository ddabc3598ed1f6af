package dev.ccagent.cc.bbr;

/**
 * A min-RTT estimate that expires: the smallest RTT sample since {@code stamp}, replaced by the
 * next sample once it is older than the expiry interval (quiche {@code MaybeUpdateMinRtt}, Linux
 * {@code bbr_update_min_rtt}, the draft's {@code probe_rtt_min_delay}). An expiry is what sends BBR
 * into PROBE_RTT.
 *
 * <p><b>Low-RTT leniency</b> (after picoquic, whose {@code PICOQUIC_MINRTT_THRESHOLD} and margin
 * are 128 µs): when the min RTT is at most {@link #LOW_RTT_NANOS} — loopback or a LAN — RTT
 * differences of that order are scheduling noise, not queueing. Then a sample within
 * {@link #LOW_RTT_NANOS} of the min confirms the min and refreshes its timestamp, so the estimate
 * does not expire and PROBE_RTT is not entered merely because no sample was strictly smaller.
 * A genuinely higher RTT (above min + margin for the whole interval) still expires it.
 *
 * <p>RTT samples of zero or less are no samples and are ignored.
 */
public final class MinRttFilter {

    /** Min RTTs at or below this are "tiny"; also the noise margin used for them (128 µs). */
    public static final long LOW_RTT_NANOS = 128_000L;

    private long expiryNanos;
    private final boolean lenient;
    private long value;
    private long stamp;
    private boolean expired;

    public MinRttFilter(long expiryNanos, boolean lenientAtLowRtt) {
        this.expiryNanos = expiryNanos;
        this.lenient = lenientAtLowRtt;
    }

    /**
     * Adds an RTT sample taken at {@code now}.
     *
     * @return whether the previous estimate had expired (the sample then replaced it)
     */
    public boolean update(long rttNanos, long now) {
        expired = false;
        if (rttNanos <= 0) {
            return false;
        }
        if (value == 0) {
            value = rttNanos;
            stamp = now;
            return false;
        }
        if (lenient && value <= LOW_RTT_NANOS && rttNanos <= value + LOW_RTT_NANOS) {
            // Tiny RTT: within the noise margin the sample confirms the min.
            value = Math.min(value, rttNanos);
            stamp = now;
            return false;
        }
        expired = now - stamp > expiryNanos;
        if (expired || rttNanos < value) {
            value = rttNanos;
            stamp = now;
        }
        return expired;
    }

    /** Whether the estimate is past its expiry at {@code now} (without a new sample). */
    public boolean isExpiredAt(long now) {
        return value != 0 && now - stamp > expiryNanos;
    }

    /** Restarts the expiry clock without changing the value (after PROBE_RTT). */
    public void refresh(long now) {
        stamp = now;
    }

    /** Forces the value (and restarts the clock). */
    public void set(long rttNanos, long now) {
        if (rttNanos > 0) {
            value = rttNanos;
            stamp = now;
        }
    }

    /** The min RTT, or 0 before any sample. */
    public long value() {
        return value;
    }

    public long stamp() {
        return stamp;
    }

    public boolean lastUpdateExpired() {
        return expired;
    }

    public long expiryNanos() {
        return expiryNanos;
    }

    public void setExpiryNanos(long expiryNanos) {
        this.expiryNanos = expiryNanos;
    }

    public boolean lenient() {
        return lenient;
    }
}
