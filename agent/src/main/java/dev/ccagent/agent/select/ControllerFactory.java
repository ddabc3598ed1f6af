package dev.ccagent.agent.select;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.cc.registry.Algorithms;
import dev.ccagent.cc.CcOptions;
import dev.ccagent.cc.CongestionController;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Creates one of our controllers for an arm, sized to the connection's datagram size unless the
 * operator set {@code mss} explicitly. Options are validated when the configuration is parsed;
 * the per-size variants are cached.
 */
public final class ControllerFactory {

    private static final Map<String, CcOptions> SIZED = new ConcurrentHashMap<>();

    /** Sized option sets kept; {@code set} changes add keys, so the cache is cleared beyond this. */
    static final int MAX_CACHED = 64;

    private ControllerFactory() {
    }

    /** Forgets the cached option sets (detach). */
    public static void clearCache() {
        SIZED.clear();
    }

    /** A new controller for {@code arm}; null for the stock arm. */
    public static CongestionController create(AgentConfig.Arm arm, int maxDatagramSize) {
        return create(arm, maxDatagramSize, 0);
    }

    /**
     * A new controller for {@code arm}, sized to the connection's datagram size and, unless the
     * operator set {@code quantum-ratio}, with the host's preferred pacer quantum ratio
     * ({@code hostQuantumRatio} > 0; 0 keeps the algorithm's default); null for the stock arm.
     */
    public static CongestionController create(AgentConfig.Arm arm, int maxDatagramSize, double hostQuantumRatio) {
        if (arm.isStock()) {
            return null;
        }
        CcOptions options = arm.options();
        boolean size = !options.isSet(CcOptions.MSS) && maxDatagramSize >= 1200 && maxDatagramSize <= 65527
                && maxDatagramSize != options.mss();
        boolean quantum = hostQuantumRatio > 0 && !options.isSet(CcOptions.QUANTUM_RATIO)
                && hostQuantumRatio != options.quantumRatio();
        if (size || quantum) {
            String key = arm.algorithm() + "|" + options.given() + "|" + maxDatagramSize + "|" + hostQuantumRatio;
            if (SIZED.size() >= MAX_CACHED && !SIZED.containsKey(key)) {
                SIZED.clear(); // bounded: configurations changed many times over
            }
            options = SIZED.computeIfAbsent(key, k -> {
                Map<String, String> raw = new LinkedHashMap<>(arm.options().given());
                if (size) {
                    raw.put(CcOptions.MSS, Integer.toString(maxDatagramSize));
                }
                if (quantum) {
                    raw.put(CcOptions.QUANTUM_RATIO, Double.toString(hostQuantumRatio));
                }
                return Algorithms.options(arm.algorithm(), raw);
            });
        }
        return Algorithms.create(options);
    }
}
