package dev.ccagent.it.kwik;

import java.io.DataInputStream;
import java.io.IOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The bulk protocol shared by {@link KwikBulkServer} and {@link KwikBulkClient}, one transfer per
 * bidirectional stream. The client opens with a 17-byte header: mode ({@code 'U'} upload or
 * {@code 'D'} download), byte count, seed (both big-endian longs).
 * <ul>
 *   <li>{@code U}: the client sends the count's bytes of seeded data and closes its side; the server
 *       replies {@code OK <bytes> <sha256 hex>\n} about what it received, and closes.</li>
 *   <li>{@code D}: the server sends the count's bytes of seeded data and closes; the client checks
 *       the SHA-256 against the data it generates itself from the same seed, then closes its side
 *       (so the server knows the transfer is complete).</li>
 * </ul>
 * The data is counter-based pseudo-random (a 64-bit mix of seed and position), so any chunking of
 * the stream generates the same bytes.
 */
public final class BulkData {

    public static final byte UPLOAD = 'U';
    public static final byte DOWNLOAD = 'D';
    public static final int HEADER_BYTES = 17;
    public static final String ALPN = "bulk";

    private BulkData() {
    }

    /** Fills {@code buf[off, off+len)} with the stream's bytes starting at {@code position}. */
    public static void fill(long seed, long position, byte[] buf, int off, int len) {
        long word = position >>> 3;
        int shift = (int) (position & 7) * 8;
        long v = mix(seed, word);
        for (int i = 0; i < len; i++) {
            buf[off + i] = (byte) (v >>> shift);
            shift += 8;
            if (shift == 64) {
                shift = 0;
                v = mix(seed, ++word);
            }
        }
    }

    static long mix(long seed, long word) {
        long z = seed * 0x9E3779B97F4A7C15L + word * 0xBF58476D1CE4E5B9L + 0x94D049BB133111EBL;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** SHA-256 of the first {@code bytes} bytes of the stream for {@code seed}. */
    public static byte[] expectedSha256(long seed, long bytes) {
        MessageDigest md = sha256();
        byte[] buf = new byte[64 * 1024];
        for (long pos = 0; pos < bytes; ) {
            int n = (int) Math.min(buf.length, bytes - pos);
            fill(seed, pos, buf, 0, n);
            md.update(buf, 0, n);
            pos += n;
        }
        return md.digest();
    }

    public static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    public static String hex(byte[] b) {
        return HexFormat.of().formatHex(b);
    }

    public static byte[] header(byte mode, long bytes, long seed) {
        byte[] h = new byte[HEADER_BYTES];
        h[0] = mode;
        for (int i = 0; i < 8; i++) {
            h[1 + i] = (byte) (bytes >>> (56 - 8 * i));
            h[9 + i] = (byte) (seed >>> (56 - 8 * i));
        }
        return h;
    }

    /** Reads the header: {mode, bytes, seed}. */
    public static long[] readHeader(DataInputStream in) throws IOException {
        byte mode = in.readByte();
        long bytes = in.readLong();
        long seed = in.readLong();
        return new long[] {mode, bytes, seed};
    }
}
