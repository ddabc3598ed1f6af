package dev.ccagent.agent.select;

import dev.ccagent.agent.config.AgentConfig;

import java.util.List;

/**
 * Assigns each new connection to an arm of the configuration: deterministic in the connection id
 * (the same id always lands in the same arm under the same split), so a canary's membership can
 * be recomputed offline from the ids in a recording.
 */
public final class AlgorithmSelector {

    /** Resolution of the split: 1/100 of a percent. */
    static final int BUCKETS = 10_000;

    private AlgorithmSelector() {
    }

    /** The arm for a connection whose id hashes to {@code idHash} (see {@link #hash(byte[])}). */
    public static AgentConfig.Arm select(AgentConfig config, long idHash) {
        return select(config.canaryArms(), config.defaultArm(), idHash);
    }

    /** The same split over any arms (Netty QUIC's {@code netty.canary} arms name quiche's algorithms). */
    public static AgentConfig.Arm select(List<AgentConfig.Arm> canaries, AgentConfig.Arm defaultArm, long idHash) {
        int bucket = bucket(idHash);
        int upper = 0;
        for (int i = 0; i < canaries.size(); i++) {
            AgentConfig.Arm arm = canaries.get(i);
            upper += (int) Math.round(arm.percent() * (BUCKETS / 100.0));
            if (bucket < upper) {
                return arm;
            }
        }
        return defaultArm;
    }

    /** Bucket in [0, 10000) of a hash. */
    static int bucket(long idHash) {
        return (int) Long.remainderUnsigned(mix(idHash), BUCKETS);
    }

    /**
     * The hash {@link #select} takes for a connection id under {@code config}: keyed SipHash-2-4 when
     * {@code canary.salt} is set (a client that does not know the salt cannot choose its arm), else
     * the unsalted {@link #hash(byte[])} (arms recomputable offline from the ids alone).
     */
    public static long hash(AgentConfig config, byte[] connectionId) {
        long[] key = config != null ? config.canarySaltKey() : null;
        return key == null ? hash(connectionId) : sipHash24(key[0], key[1], connectionId);
    }

    /**
     * SipHash-2-4 (Aumasson and Bernstein, 2012) of {@code data} (null: empty) under the 128-bit key
     * {@code k0,k1}: a keyed pseudo-random function, so outputs are unpredictable without the key.
     * No allocation.
     */
    static long sipHash24(long k0, long k1, byte[] data) {
        long v0 = k0 ^ 0x736f6d6570736575L;
        long v1 = k1 ^ 0x646f72616e646f6dL;
        long v2 = k0 ^ 0x6c7967656e657261L;
        long v3 = k1 ^ 0x7465646279746573L;
        int len = data == null ? 0 : data.length;
        int full = len & ~7;
        long last = ((long) len & 0xff) << 56;
        if (len > full) {
            last |= le(data, full, len - full);
        }
        // the full 8-byte words, then the last one (the tail and the length), 2 rounds each; then the
        // finalisation's 4 rounds
        for (int i = 0; i <= full + 8; i += 8) {
            boolean finalisation = i > full;
            long m = i < full ? le(data, i, 8) : last;
            if (finalisation) {
                v2 ^= 0xff;
            } else {
                v3 ^= m;
            }
            int rounds = finalisation ? 4 : 2;
            for (int r = 0; r < rounds; r++) {
                v0 += v1; v1 = Long.rotateLeft(v1, 13); v1 ^= v0; v0 = Long.rotateLeft(v0, 32);
                v2 += v3; v3 = Long.rotateLeft(v3, 16); v3 ^= v2;
                v0 += v3; v3 = Long.rotateLeft(v3, 21); v3 ^= v0;
                v2 += v1; v1 = Long.rotateLeft(v1, 17); v1 ^= v2; v2 = Long.rotateLeft(v2, 32);
            }
            if (!finalisation) {
                v0 ^= m;
            }
        }
        return v0 ^ v1 ^ v2 ^ v3;
    }

    /** {@code n} (1..8) bytes from {@code off}, little-endian. */
    private static long le(byte[] b, int off, int n) {
        long v = 0;
        for (int i = n - 1; i >= 0; i--) {
            v = (v << 8) | (b[off + i] & 0xffL);
        }
        return v;
    }

    /** A stable 64-bit hash of a connection id (FNV-1a), the input of {@link #select} when no salt is set. */
    public static long hash(byte[] connectionId) {
        long h = 0xcbf29ce484222325L;
        if (connectionId != null) {
            for (byte b : connectionId) {
                h ^= b & 0xff;
                h *= 0x100000001b3L;
            }
        }
        return h;
    }

    /** The murmur3 finaliser: spreads FNV's low-entropy high bits before taking the bucket. */
    static long mix(long z) {
        z = (z ^ (z >>> 33)) * 0xff51afd7ed558ccdL;
        z = (z ^ (z >>> 33)) * 0xc4ceb9fe1a85ec53L;
        return z ^ (z >>> 33);
    }
}
