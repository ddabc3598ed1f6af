package dev.ccagent.cc.pacing;

/**
 * A leaky-bucket pacer in nanoseconds, after picoquic's {@code pacing.c}.
 *
 * <p>The bucket fills at the pacing rate up to one quantum, the burst the sender may emit back to
 * back: {@code quantum = rate × quantumRatio}, capped at {@value #MAX_QUANTUM} bytes and floored at
 * two packets (one packet when two would be more than {@value #LOW_RATE_FLOOR_MILLIS} ms of
 * traffic). A packet may leave when the bucket holds its size; sending drains the bucket, which may
 * go into debt (down to minus one quantum) when the host sends regardless.
 *
 * <p>Two invariants the localhost spin taught us (quic-go issue 4054), held by construction:
 * <ul>
 *   <li>The rate is never 0: a rate of 0 or less means "unknown" and selects the fallback rate
 *       (the algorithm's initial rate: gain × initial window / initial RTT), and every rate is at
 *       least {@value #MIN_RATE_PACKETS_PER_SECOND} packets per second.</li>
 *   <li>{@link #earliestSendTime} never returns a time before {@code now}, and returns exactly
 *       {@code now} only when the bucket has budget for the packet; without budget it returns a
 *       time strictly in the future, when the budget will have refilled.</li>
 * </ul>
 * <p>Late wake-ups: a host whose sender thread runs late (a loaded machine, a slow socket loop)
 * comes back after the time it was told, and with the bucket capped at one quantum the time in
 * between would be lost for good: the sender then sends below the pacing rate, BBR measures the
 * lower delivery rate and lowers the pacing rate in turn, a downward spiral we saw on a loaded
 * 2-core machine. So while the sender is backlogged on the pacer (the last answer was "wait") the
 * bucket may fill beyond one quantum, up to {@value #CATCH_UP_MILLIS} ms of traffic (at most
 * {@value #MAX_QUANTUM} bytes), if it comes back within {@value #CATCH_UP_WINDOW_MILLIS} ms of the
 * answered time. A punctual host never sees a difference; a late one catches up with a bounded
 * burst. Time the sender spent limited by the window or by the application is not owed: the
 * controller calls {@link #notBacklogged()} then, and the cap is one quantum again.
 *
 * <p>Allocation free; not thread-safe.
 */
public final class Pacer {

    /** Largest burst, bytes (picoquic caps its quantum at 64 KiB). */
    public static final long MAX_QUANTUM = 64 * 1024;
    /** Below this many packets per second the rate is raised to it. */
    public static final int MIN_RATE_PACKETS_PER_SECOND = 10;
    /** Two packets longer than this at the current rate: the quantum floor drops to one packet. */
    public static final int LOW_RATE_FLOOR_MILLIS = 10;
    /** How much missed sending time a late, backlogged sender may make up. */
    public static final int CATCH_UP_MILLIS = 10;
    /** Coming back later than this after the answered time counts as idle, not late. */
    public static final int CATCH_UP_WINDOW_MILLIS = 20;

    private final int mss;
    private final double quantumRatio;
    private final long minRate;
    private long fallbackRate;
    private long rate;
    private long quantum;
    /** Budget in bytes; fractional so slow rates accumulate exactly. */
    private double bucket;
    private long lastUpdate;
    private boolean started;
    /** The last answer was "wait": the sender has a packet ready and waits for budget. */
    private boolean backlogged;
    /** The time that answer named. */
    private long backlogDeadline;

    /**
     * @param mss maximum datagram size
     * @param quantumRatio quantum as a fraction of one second's traffic (default 0.001)
     * @param fallbackRate the rate used while the algorithm has none, bytes/s
     * @param initialBurst bytes that may leave at once before pacing starts (the initial window);
     *                     spent once, never refilled above the quantum
     */
    public Pacer(int mss, double quantumRatio, long fallbackRate, long initialBurst) {
        if (mss <= 0) {
            throw new IllegalArgumentException("mss must be positive: " + mss);
        }
        if (!(quantumRatio > 0) || quantumRatio > 1) {
            throw new IllegalArgumentException("quantum ratio must be in (0, 1]: " + quantumRatio);
        }
        this.mss = mss;
        this.quantumRatio = quantumRatio;
        this.minRate = (long) mss * MIN_RATE_PACKETS_PER_SECOND;
        this.fallbackRate = Math.max(minRate, fallbackRate);
        setRate(0);
        this.bucket = Math.max(quantum, initialBurst);
    }

    /** Changes the rate used when the algorithm reports none. */
    public void setFallbackRate(long bytesPerSecond) {
        boolean usingFallback = rate == fallbackRate;
        fallbackRate = Math.max(minRate, bytesPerSecond);
        if (usingFallback) {
            setRate(0);
        }
    }

    /**
     * Sets the pacing rate, bytes per second. Zero or negative means unknown: the fallback rate.
     * Call {@link #earliestSendTime} or {@link #onPacketSent} with the current time first if the
     * budget accumulated so far should count at the old rate (the algorithms do so implicitly by
     * updating on each ack, which the pacer treats as a refill point).
     */
    public void setRate(long bytesPerSecond) {
        long r = bytesPerSecond > 0 ? bytesPerSecond : fallbackRate;
        r = Math.max(minRate, r);
        rate = r;
        long q = (long) (r * quantumRatio);
        long floor = 2L * mss;
        if (2.0 * mss * 1000.0 / r > LOW_RATE_FLOOR_MILLIS) {
            floor = mss;
        }
        quantum = Math.min(MAX_QUANTUM, Math.max(floor, q));
    }

    /** Current rate in bytes per second; never 0. */
    public long rate() {
        return rate;
    }

    /** Current burst quantum in bytes. */
    public long quantum() {
        return quantum;
    }

    /** The budget in bytes at the last update (may be negative: debt). */
    public double budget() {
        return bucket;
    }

    /**
     * The earliest time a packet of {@code bytes} may leave: {@code now} when the bucket holds
     * enough, otherwise the strictly later time at which it will.
     */
    public long earliestSendTime(long now, int bytes) {
        refill(now);
        double needed = Math.min(Math.max(bytes, 1), quantum);
        if (bucket >= needed) {
            backlogged = false;
            return now;
        }
        double deficit = needed - bucket;
        long wait = Math.max(1, (long) Math.ceil(deficit * 1e9 / rate));
        // The bucket was last refilled at lastUpdate, which can be later than a stale 'now' handed
        // in by another thread: refilling starts from there.
        long answer = Math.max(now, lastUpdate) + wait;
        backlogged = true;
        backlogDeadline = answer;
        return answer;
    }

    /**
     * The sender is not waiting for the pacer (its window is full, or it has nothing to send): the
     * time until it asks again is not owed to it.
     */
    public void notBacklogged() {
        backlogged = false;
    }

    /** Whether a packet of {@code bytes} may leave at {@code now}. */
    public boolean canSend(long now, int bytes) {
        return earliestSendTime(now, bytes) == now;
    }

    /** Charges a sent packet against the budget. */
    public void onPacketSent(long now, int bytes) {
        refill(now);
        bucket = Math.max(bucket - bytes, -(double) quantum);
    }

    private void refill(long now) {
        if (!started) {
            started = true;
            lastUpdate = now;
            return;
        }
        long elapsed = now - lastUpdate;
        if (elapsed <= 0) {
            return; // same instant, or a clock that went backwards: no refill, no harm
        }
        lastUpdate = now;
        double cap = quantum;
        if (backlogged && now - backlogDeadline <= CATCH_UP_WINDOW_MILLIS * 1_000_000L) {
            cap = Math.max(quantum, Math.min((double) MAX_QUANTUM, rate * (CATCH_UP_MILLIS / 1000.0)));
        }
        if (bucket >= cap) {
            return; // full (or still holding the initial burst)
        }
        double added = elapsed * (rate / 1e9);
        bucket = Math.min(bucket + added, cap);
    }
}
