package dev.ccagent.cc;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Parsed, validated options for one algorithm instance. Built by
 * {@link AlgorithmDescriptor#parseOptions(Map)}; read once when a controller is created.
 */
public final class CcOptions {

    /** Max datagram size, bytes. */
    public static final String MSS = "mss";
    /** Initial window in packets; default per RFC 9002 §7.2: min(10·MDS, max(14720, 2·MDS)). */
    public static final String INITIAL_WINDOW = "initial-window";
    /** RTT assumed before the first sample (RFC 9002 kInitialRtt). */
    public static final String INITIAL_RTT = "initial-rtt";
    /** Pacer burst quantum as a fraction of a second of traffic at the pacing rate. */
    public static final String QUANTUM_RATIO = "quantum-ratio";
    /** Whether the controller paces at all. */
    public static final String PACING = "pacing";

    private final String algorithm;
    private final Map<String, Object> values;
    private final Map<String, String> given;

    CcOptions(String algorithm, Map<String, Object> values, Map<String, String> given) {
        this.algorithm = algorithm;
        this.values = Collections.unmodifiableMap(new LinkedHashMap<>(values));
        this.given = Collections.unmodifiableMap(new LinkedHashMap<>(given));
    }

    public String algorithm() {
        return algorithm;
    }

    public long getLong(String key) {
        return (Long) require(key);
    }

    public double getDouble(String key) {
        return (Double) require(key);
    }

    public boolean getBoolean(String key) {
        return (Boolean) require(key);
    }

    /** Whether the option was set explicitly rather than defaulted. */
    public boolean isSet(String key) {
        return given.containsKey(key);
    }

    /** The options as the operator wrote them (for logs and events). */
    public Map<String, String> given() {
        return given;
    }

    public int mss() {
        return (int) getLong(MSS);
    }

    /** Initial window in bytes: the option in packets × MSS, or RFC 9002's default. */
    public long initialWindowBytes() {
        int mss = mss();
        if (isSet(INITIAL_WINDOW)) {
            return getLong(INITIAL_WINDOW) * mss;
        }
        return Math.min(10L * mss, Math.max(14720L, 2L * mss));
    }

    public long initialRttNanos() {
        return getLong(INITIAL_RTT);
    }

    public double quantumRatio() {
        return getDouble(QUANTUM_RATIO);
    }

    public boolean pacing() {
        return getBoolean(PACING);
    }

    private Object require(String key) {
        Object v = values.get(key);
        if (v == null) {
            throw new IllegalStateException("algorithm " + algorithm + " has no option " + key);
        }
        return v;
    }

    @Override
    public String toString() {
        return given.isEmpty() ? "defaults" : given.toString();
    }
}
