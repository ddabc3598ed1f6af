package dev.ccagent.agent.measure;

/**
 * A fixed log-bucket histogram of RTT samples in nanoseconds: 16 buckets per power of two from
 * 1 µs to about 18 minutes (480 buckets), so a percentile read from a bucket's midpoint is within
 * 3.2% of the sample it stands for. Recording is O(1) and allocates nothing; the array is allocated
 * once per connection (1,920 bytes).
 *
 * <p>Not thread-safe: the owner synchronises (see {@link ConnectionMeter}); {@link WindowedRtt} keeps
 * the concurrent per-arm variant.
 */
public final class RttHistogram {

    static final int SUB_BITS = 4;
    static final int SUB = 1 << SUB_BITS;
    /** Lowest octave: 2^10 ns (about 1 µs); everything below lands in bucket 0. */
    static final int MIN_EXP = 10;
    static final int OCTAVES = 30;
    public static final int BUCKETS = OCTAVES * SUB;

    private final int[] counts = new int[BUCKETS];
    private long total;

    /** Bucket of a sample (negative and tiny samples in bucket 0, huge ones in the last). */
    static int bucket(long nanos) {
        if (nanos < (1L << MIN_EXP)) {
            return 0;
        }
        int exp = 63 - Long.numberOfLeadingZeros(nanos);
        int sub = (int) (nanos >>> (exp - SUB_BITS)) & (SUB - 1);
        int index = (exp - MIN_EXP) * SUB + sub;
        return Math.min(index, BUCKETS - 1);
    }

    /** The value a bucket stands for: its midpoint. */
    static long value(int bucket) {
        int exp = bucket / SUB + MIN_EXP;
        int sub = bucket % SUB;
        long lower = (long) (SUB + sub) << (exp - SUB_BITS);
        long width = 1L << (exp - SUB_BITS);
        return lower + width / 2;
    }

    public void record(long nanos) {
        counts[bucket(nanos)]++;
        total++;
    }

    public long count() {
        return total;
    }

    public void clear() {
        java.util.Arrays.fill(counts, 0);
        total = 0;
    }

    /** The q-quantile (0 &lt; q ≤ 1) in nanoseconds; 0 without samples. */
    public long percentile(double q) {
        return percentile(counts, total, q);
    }

    static long percentile(int[] counts, long total, double q) {
        if (total <= 0) {
            return 0;
        }
        long rank = Math.max(1, (long) Math.ceil(q * total));
        long seen = 0;
        for (int i = 0; i < counts.length; i++) {
            seen += counts[i];
            if (seen >= rank) {
                return value(i);
            }
        }
        return value(counts.length - 1);
    }
}
