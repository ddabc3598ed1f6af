package dev.ccagent.sim;

import java.util.Arrays;

/** A growable list of primitive longs. */
final class LongList {
    private long[] values = new long[64];
    private int size;

    void add(long v) {
        if (size == values.length) {
            values = Arrays.copyOf(values, size * 2);
        }
        values[size++] = v;
    }

    int size() {
        return size;
    }

    void clear() {
        size = 0;
    }

    long[] toArray() {
        return Arrays.copyOf(values, size);
    }
}
