package dev.ccagent.agent.netty;

import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class FieldOffsetFinderTest {

    /**
     * Snapshots of random memory in which {@code offset} holds {@code values} (width bytes, little-endian). Each
     * test passes its own fixed seed, so every result below is the same every run: odds 0.
     */
    private static byte[][] memory(int size, int offset, int width, long[] values, long seed) {
        Random r = new Random(seed);
        byte[] base = new byte[size];
        r.nextBytes(base);
        byte[][] out = new byte[values.length][];
        for (int i = 0; i < values.length; i++) {
            out[i] = base.clone();
            for (int k = 0; k < width; k++) {
                out[i][offset + k] = (byte) (values[i] >>> (8 * k));
            }
        }
        return out;
    }

    @Test
    void findsTheOneByteThatFollowsTheSetterCalls() {
        long[] cc = {1, 0, 1, 0, 1, 1, 1};
        assertEquals(777, FieldOffsetFinder.find(memory(4096, 777, 1, cc, 1), cc, 1));
    }

    @Test
    void findsAnEightByteFieldAtAnUnalignedOffset() {
        long[] cwnd = {10, 10, 37, 10, 91};
        assertEquals(1001, FieldOffsetFinder.find(memory(2048, 1001, 8, cwnd, 2), cwnd, 8));
        // the same memory read as one byte: the low byte alone follows the sequence too
        assertEquals(1001, FieldOffsetFinder.find(memory(2048, 1001, 8, cwnd, 2), cwnd, 1));
    }

    @Test
    void anotherFieldFollowingTheSameSequenceIsAmbiguous() {
        long[] v = {1, 0, 1, 0};
        byte[][] s = memory(512, 100, 1, v, 3);
        for (byte[] each : s) {
            each[300] = each[100];
        }
        assertEquals(FieldOffsetFinder.AMBIGUOUS, FieldOffsetFinder.find(s, v, 1));
    }

    @Test
    void aFieldThatDidNotMoveIsNotFound() {
        long[] v = {1, 0, 1, 0};
        byte[][] s = memory(512, 100, 1, v, 4);
        for (byte[] each : s) {
            each[100] = 1; // the setter changed nothing we read (e.g. the field lies past the bytes read)
        }
        assertEquals(FieldOffsetFinder.NOT_FOUND, FieldOffsetFinder.find(s, v, 1));
    }

    @Test
    void onlyOffsetsInsideEverySnapshotCount() {
        long[] v = {0, 1, 0};
        byte[][] s = memory(256, 250, 1, v, 5);
        s[1] = java.util.Arrays.copyOf(s[1], 200); // that read stopped early
        assertEquals(FieldOffsetFinder.NOT_FOUND, FieldOffsetFinder.find(s, v, 1));
    }

    @Test
    void aConstantSequenceIsRefused() {
        assertThrows(IllegalArgumentException.class,
                () -> FieldOffsetFinder.find(new byte[][] {{1}, {1}}, new long[] {1, 1}, 1));
    }
}
