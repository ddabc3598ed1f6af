package dev.ccagent.cc;

import dev.ccagent.cc.bbr.Bbr1;
import dev.ccagent.cc.bbr.Bbr3;
import dev.ccagent.cc.cubic.Cubic;
import dev.ccagent.cc.reno.HighBdpReno;
import dev.ccagent.cc.reno.NewReno;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The registry: every algorithm by its name. Each algorithm class declares its own
 * {@code DESCRIPTOR}; this class only lists them.
 */
public final class Algorithms {

    private static final Map<String, AlgorithmDescriptor> BY_NAME;

    static {
        Map<String, AlgorithmDescriptor> m = new LinkedHashMap<>();
        for (AlgorithmDescriptor d : List.of(
                NewReno.DESCRIPTOR,
                Cubic.DESCRIPTOR,
                HighBdpReno.DESCRIPTOR,
                Bbr1.DESCRIPTOR,
                Bbr3.DESCRIPTOR)) {
            m.put(d.name(), d);
        }
        BY_NAME = Collections.unmodifiableMap(m);
    }

    private Algorithms() {
    }

    /** Names of all registered algorithms, in registration order. */
    public static List<String> names() {
        return List.copyOf(BY_NAME.keySet());
    }

    public static boolean exists(String name) {
        return BY_NAME.containsKey(name);
    }

    /** @throws CcConfigException naming the unknown algorithm and listing the known ones */
    public static AlgorithmDescriptor descriptor(String name) {
        AlgorithmDescriptor d = name == null ? null : BY_NAME.get(name.strip());
        if (d == null) {
            throw new CcConfigException("unknown congestion control algorithm '" + name
                    + "'; known: " + String.join(", ", BY_NAME.keySet()));
        }
        return d;
    }

    /** Parses the options for {@code name}; call once per configuration, then {@link #create(CcOptions)}. */
    public static CcOptions options(String name, Map<String, String> rawOptions) {
        return descriptor(name).parseOptions(rawOptions);
    }

    /** Creates a controller from already-validated options. */
    public static CongestionController create(CcOptions options) {
        return descriptor(options.algorithm()).create(options);
    }

    /** Convenience: validate and create in one step. */
    public static CongestionController create(String name, Map<String, String> rawOptions) {
        return create(options(name, rawOptions));
    }
}
