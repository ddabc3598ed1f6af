package dev.ccagent.it.micronaut;

import dev.ccagent.it.kwik.BulkData;

import java.io.InputStream;

/** The first {@code length} bytes of BulkData's stream for a seed, generated as they are read. */
final class BulkDataStream extends InputStream {

    private final long seed;
    private final long length;
    private long position;

    BulkDataStream(long seed, long length) {
        this.seed = seed;
        this.length = length;
    }

    @Override
    public int read() {
        byte[] one = new byte[1];
        return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) {
        if (len == 0) {
            return 0;
        }
        if (position >= length) {
            return -1;
        }
        int n = (int) Math.min(len, length - position);
        BulkData.fill(seed, position, b, off, n);
        position += n;
        return n;
    }

    @Override
    public int available() {
        return (int) Math.min(Integer.MAX_VALUE, length - position);
    }
}
