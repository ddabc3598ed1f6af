package dev.ccagent.agent.measure;

import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * An arm's RTT samples over a recent window, shared by all its connections: two
 * {@link RttHistogram}-shaped slices of half a window each; {@link #rotate} (the summary ticker,
 * every half window) clears the older slice and makes it current, so a percentile covers between
 * half a window and a whole one. Recording is one atomic increment: O(1), no allocation.
 */
final class WindowedRtt {

    private final AtomicIntegerArray[] slices = {
            new AtomicIntegerArray(RttHistogram.BUCKETS), new AtomicIntegerArray(RttHistogram.BUCKETS)};
    private volatile int current;

    void record(long nanos) {
        slices[current].incrementAndGet(RttHistogram.bucket(nanos));
    }

    /** Starts a new half window: the oldest samples are dropped. */
    synchronized void rotate() {
        int next = 1 - current;
        AtomicIntegerArray s = slices[next];
        for (int i = 0; i < RttHistogram.BUCKETS; i++) {
            s.set(i, 0);
        }
        current = next;
    }

    /** The q-quantile over the window in nanoseconds, 0 without samples. */
    long percentile(double q) {
        int[] sum = new int[RttHistogram.BUCKETS];
        long total = 0;
        for (AtomicIntegerArray s : slices) {
            for (int i = 0; i < sum.length; i++) {
                int c = s.get(i);
                sum[i] += c;
                total += c;
            }
        }
        return RttHistogram.percentile(sum, total, q);
    }

    long samples() {
        long total = 0;
        for (AtomicIntegerArray s : slices) {
            for (int i = 0; i < RttHistogram.BUCKETS; i++) {
                total += s.get(i);
            }
        }
        return total;
    }
}
