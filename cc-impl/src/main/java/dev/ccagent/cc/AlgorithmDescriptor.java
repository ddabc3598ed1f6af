package dev.ccagent.cc;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

/** An algorithm as the registry knows it: its name, options and how to create an instance. */
public final class AlgorithmDescriptor {

    /** Options every algorithm accepts. */
    public static final List<OptionSpec> COMMON_OPTIONS = List.of(
            OptionSpec.bytes(CcOptions.MSS, 1200, 65527, "1200", "maximum datagram size"),
            OptionSpec.integer(CcOptions.INITIAL_WINDOW, 2, 1000, null,
                    "initial window in packets (default RFC 9002: min(10, max(14720 B, 2 packets)))"),
            OptionSpec.duration(CcOptions.INITIAL_RTT, 1_000L, 10_000_000_000L, "333ms",
                    "RTT assumed before the first sample"),
            OptionSpec.decimal(CcOptions.QUANTUM_RATIO, 0, true, 1, "0.001",
                    "pacer burst as a fraction of one second at the pacing rate"),
            OptionSpec.bool(CcOptions.PACING, "on", "pace packets"));

    private final String name;
    private final String summary;
    private final Map<String, OptionSpec> options;
    private final Function<CcOptions, CongestionController> factory;

    public AlgorithmDescriptor(String name, String summary, List<OptionSpec> ownOptions,
                               Function<CcOptions, CongestionController> factory) {
        this.name = name;
        this.summary = summary;
        Map<String, OptionSpec> all = new LinkedHashMap<>();
        for (OptionSpec spec : COMMON_OPTIONS) {
            all.put(spec.key(), spec);
        }
        for (OptionSpec spec : ownOptions) {
            all.put(spec.key(), spec); // an algorithm may override a common option's default
        }
        this.options = Collections.unmodifiableMap(all);
        this.factory = factory;
    }

    public String name() {
        return name;
    }

    public String summary() {
        return summary;
    }

    public Map<String, OptionSpec> options() {
        return options;
    }

    /**
     * Validates raw {@code key=value} options against this algorithm's specs.
     *
     * @throws CcConfigException for an unknown key (listing the valid ones) or a bad value
     */
    public CcOptions parseOptions(Map<String, String> raw) {
        Map<String, Object> values = new LinkedHashMap<>();
        for (OptionSpec spec : options.values()) {
            if (spec.defaultText() != null) {
                values.put(spec.key(), spec.parse(spec.defaultText()));
            }
        }
        List<String> unknown = new ArrayList<>();
        for (Map.Entry<String, String> e : raw.entrySet()) {
            OptionSpec spec = options.get(e.getKey());
            if (spec == null) {
                unknown.add(e.getKey());
                continue;
            }
            try {
                values.put(spec.key(), spec.parse(e.getValue()));
            } catch (CcConfigException ex) {
                throw new CcConfigException(name + ": " + ex.getMessage());
            }
        }
        if (!unknown.isEmpty()) {
            throw new CcConfigException(name + ": unknown option" + (unknown.size() > 1 ? "s " : " ")
                    + String.join(", ", unknown) + "; valid options: "
                    + options.keySet().stream().collect(Collectors.joining(", ")));
        }
        return new CcOptions(name, values, raw);
    }

    public CongestionController create(CcOptions options) {
        if (!name.equals(options.algorithm())) {
            throw new IllegalArgumentException("options for " + options.algorithm() + " given to " + name);
        }
        return factory.apply(options);
    }
}
