package dev.ccagent.agent.netty;

/**
 * Finds where a field sits in an opaque native struct from snapshots of its bytes: the one offset
 * whose little-endian value of {@code width} bytes equals, in every snapshot, the value the field was
 * set to before that snapshot was taken. Used on a scratch quiche config ({@link NettyConfigLayout}),
 * whose setters each change one field: a byte of unrelated memory that happens to follow the same
 * sequence of values is not expected, and two candidates make the answer "ambiguous", never a guess.
 */
final class FieldOffsetFinder {

    /** No offset holds the sequence. */
    static final int NOT_FOUND = -1;
    /** More than one offset holds it. */
    static final int AMBIGUOUS = -2;

    private FieldOffsetFinder() {
    }

    /**
     * The unique offset {@code o} such that for every {@code i}, the {@code width}-byte little-endian
     * value at {@code snapshots[i][o]} is {@code expected[i]}; {@link #NOT_FOUND} or {@link #AMBIGUOUS}
     * otherwise. Snapshots may differ in length (a read can stop early): only offsets inside all of them
     * count. {@code expected} must take at least two different values, else any constant byte would match.
     */
    static int find(byte[][] snapshots, long[] expected, int width) {
        if (snapshots.length != expected.length || snapshots.length < 2 || width < 1 || width > 8) {
            throw new IllegalArgumentException("snapshots " + snapshots.length + ", values " + expected.length
                    + ", width " + width);
        }
        boolean varies = false;
        for (long v : expected) {
            varies |= v != expected[0];
        }
        if (!varies) {
            throw new IllegalArgumentException("the expected values never change");
        }
        int length = Integer.MAX_VALUE;
        for (byte[] s : snapshots) {
            length = Math.min(length, s.length);
        }
        int found = NOT_FOUND;
        for (int o = 0; o + width <= length; o++) {
            boolean all = true;
            for (int i = 0; i < snapshots.length && all; i++) {
                all = littleEndian(snapshots[i], o, width) == expected[i];
            }
            if (all) {
                if (found != NOT_FOUND) {
                    return AMBIGUOUS;
                }
                found = o;
            }
        }
        return found;
    }

    /** The unsigned little-endian value of {@code width} bytes at {@code offset}. */
    static long littleEndian(byte[] bytes, int offset, int width) {
        long v = 0;
        for (int k = width - 1; k >= 0; k--) {
            v = (v << 8) | (bytes[offset + k] & 0xffL);
        }
        return v;
    }
}
