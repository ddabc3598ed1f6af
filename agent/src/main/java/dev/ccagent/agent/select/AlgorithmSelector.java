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

    /** A stable 64-bit hash of a connection id (FNV-1a), the input of {@link #select}. */
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
