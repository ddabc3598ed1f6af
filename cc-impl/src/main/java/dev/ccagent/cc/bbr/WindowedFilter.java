package dev.ccagent.cc.bbr;

/**
 * A windowed best-of filter over {@code long} samples: the best (maximum or minimum) sample seen
 * within the last {@code windowLength} units of "time", where time is whatever the caller counts
 * in (round trips, gain cycles, nanoseconds).
 *
 * <p>Like quiche's {@code windowed_filter.h} (itself after Kathleen Nichols' algorithm, also used
 * by Linux {@code lib/win_minmax.c}), it keeps only three samples: the best, the second best and
 * the third best, each younger than the one before it. When the best ages out of the window the
 * second best takes its place, so the estimate degrades gracefully instead of collapsing. The
 * second and third slots are refreshed with newer samples after a quarter and a half of the
 * window so that they stay useful as successors.
 *
 * <p>Time must not go backwards; a sample whose time is older than the newest kept sample is
 * treated as if it came at the newest time. Allocation free; not thread-safe.
 */
public final class WindowedFilter {

    private final boolean max;
    private long windowLength;
    private final long[] value = new long[3];
    private final long[] time = new long[3];
    private boolean empty = true;

    private WindowedFilter(boolean max, long windowLength) {
        if (windowLength < 0) {
            throw new IllegalArgumentException("window length must be >= 0: " + windowLength);
        }
        this.max = max;
        this.windowLength = windowLength;
    }

    /** A filter keeping the maximum over the window. */
    public static WindowedFilter max(long windowLength) {
        return new WindowedFilter(true, windowLength);
    }

    /** A filter keeping the minimum over the window. */
    public static WindowedFilter min(long windowLength) {
        return new WindowedFilter(false, windowLength);
    }

    public boolean isMax() {
        return max;
    }

    public long windowLength() {
        return windowLength;
    }

    /** Changes the window length; kept samples are judged against the new length on the next update. */
    public void setWindowLength(long windowLength) {
        if (windowLength < 0) {
            throw new IllegalArgumentException("window length must be >= 0: " + windowLength);
        }
        this.windowLength = windowLength;
    }

    /** Whether no sample has been kept since construction or {@link #clear()}. */
    public boolean isEmpty() {
        return empty;
    }

    /** Forgets every sample. */
    public void clear() {
        empty = true;
        for (int i = 0; i < 3; i++) {
            value[i] = 0;
            time[i] = 0;
        }
    }

    /** Forgets every sample and keeps {@code sample} as the only one (all three slots). */
    public void reset(long sample, long now) {
        empty = false;
        for (int i = 0; i < 3; i++) {
            value[i] = sample;
            time[i] = now;
        }
    }

    /** Adds a sample taken at {@code now}. */
    public void update(long sample, long now) {
        if (empty) {
            reset(sample, now);
            return;
        }
        if (now < time[2]) {
            now = time[2];
        }
        // A new best, or nothing in the window is recent enough: start over with this sample.
        if (better(sample, value[0]) || now - time[2] > windowLength) {
            reset(sample, now);
            return;
        }
        if (better(sample, value[1])) {
            value[1] = sample;
            time[1] = now;
            value[2] = sample;
            time[2] = now;
        } else if (better(sample, value[2])) {
            value[2] = sample;
            time[2] = now;
        }
        // The best has aged out: promote the successors, the new sample becomes the third.
        if (now - time[0] > windowLength) {
            shiftIn(sample, now);
            if (now - time[0] > windowLength) {
                value[0] = value[1];
                time[0] = time[1];
                value[1] = value[2];
                time[1] = time[2];
            }
            return;
        }
        // The second best is the best and a quarter window old: take a fresher second (and third).
        if (value[1] == value[0] && now - time[1] > windowLength / 4) {
            value[1] = sample;
            time[1] = now;
            value[2] = sample;
            time[2] = now;
            return;
        }
        // The third best is the second and half a window old: take a fresher third.
        if (value[2] == value[1] && now - time[2] > windowLength / 2) {
            value[2] = sample;
            time[2] = now;
        }
    }

    private void shiftIn(long sample, long now) {
        value[0] = value[1];
        time[0] = time[1];
        value[1] = value[2];
        time[1] = time[2];
        value[2] = sample;
        time[2] = now;
    }

    private boolean better(long a, long b) {
        return max ? a >= b : a <= b;
    }

    /** The best sample in the window, or 0 when empty. */
    public long best() {
        return empty ? 0 : value[0];
    }

    /** The second best kept sample, or 0 when empty. */
    public long secondBest() {
        return empty ? 0 : value[1];
    }

    /** The third best kept sample, or 0 when empty. */
    public long thirdBest() {
        return empty ? 0 : value[2];
    }

    /** The time at which the best sample was taken (0 when empty). */
    public long bestTime() {
        return empty ? 0 : time[0];
    }
}
