package dev.ccagent.report;

/**
 * Counts of positive values in logarithmic buckets 4% wide (quantiles within 2%), stored as a
 * dense array over the buckets actually seen, so a connection whose RTT stays within a factor of 2
 * costs about 20 ints. Zero and negative values are counted apart and sort first.
 */
final class LogHistogram {

    private static final double BASE = 1.04;
    private static final double LOG_BASE = Math.log(BASE);

    private int offset;
    private int[] counts;
    private long zeros;
    private long total;

    void add(double v) {
        total++;
        if (!(v >= 1)) {
            if (v > 0) {
                v = 1;
            } else {
                zeros++;
                return;
            }
        }
        addBucket((int) Math.floor(Math.log(v) / LOG_BASE), 1);
    }

    private void addBucket(int b, int c) {
        if (counts == null) {
            counts = new int[4];
            offset = b;
        } else if (b < offset) {
            int grow = offset - b;
            int[] n = new int[counts.length + grow];
            System.arraycopy(counts, 0, n, grow, counts.length);
            counts = n;
            offset = b;
        } else if (b - offset >= counts.length) {
            counts = java.util.Arrays.copyOf(counts, Math.max(b - offset + 1, counts.length * 3 / 2));
        }
        counts[b - offset] += c;
    }

    long total() {
        return total;
    }

    /** Values above {@code v} (by bucket: a bucket counts when its lower edge is above v). */
    long countAbove(double v) {
        if (counts == null) {
            return 0;
        }
        long n = 0;
        for (int i = 0; i < counts.length; i++) {
            if (Math.pow(BASE, i + offset) > v) {
                n += counts[i];
            }
        }
        return n;
    }

    /** Quantile q in [0, 1]: the geometric middle of the bucket holding it; NaN when empty. */
    double quantile(double q) {
        if (total == 0) {
            return Double.NaN;
        }
        long rank = (long) Math.ceil(q * total);
        if (rank < 1) {
            rank = 1;
        }
        if (rank <= zeros) {
            return 0;
        }
        long seen = zeros;
        for (int i = 0; i < counts.length; i++) {
            seen += counts[i];
            if (seen >= rank) {
                return Math.pow(BASE, i + offset + 0.5);
            }
        }
        return Math.pow(BASE, counts.length - 1 + offset + 0.5);
    }

    void addAll(LogHistogram o) {
        if (o.counts != null) {
            for (int i = 0; i < o.counts.length; i++) {
                int c = o.counts[i];
                if (c > 0) {
                    addBucket(i + o.offset, c);
                }
            }
        }
        zeros += o.zeros;
        total += o.total;
    }
}
