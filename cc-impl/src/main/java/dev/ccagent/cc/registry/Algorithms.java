package dev.ccagent.cc.registry;

import dev.ccagent.cc.CongestionController;
import dev.ccagent.cc.CcOptions;
import dev.ccagent.cc.CcConfigException;
import dev.ccagent.cc.AlgorithmProvider;
import dev.ccagent.cc.AlgorithmDescriptor;
import dev.ccagent.cc.bbr.Bbr1;
import dev.ccagent.cc.bbr.Bbr3;
import dev.ccagent.cc.cubic.Cubic;
import dev.ccagent.cc.reno.HighBdpReno;
import dev.ccagent.cc.reno.NewReno;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;

/**
 * The registry: every algorithm by its name. Each algorithm class declares its own
 * {@code DESCRIPTOR}; this class only lists them, plus whatever {@link AlgorithmProvider}s the
 * system class loader offers (operators' and tests' own algorithms).
 */
public final class Algorithms {

    private static final Map<String, AlgorithmDescriptor> BY_NAME;
    private static final List<String> EXTENSION_PROBLEMS;

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
        List<String> problems = new java.util.ArrayList<>();
        loadProviders(m, problems);
        BY_NAME = Collections.unmodifiableMap(m);
        EXTENSION_PROBLEMS = List.copyOf(problems);
    }

    /** Adds the algorithms of every {@link AlgorithmProvider} on the system class path; built-ins win. */
    private static void loadProviders(Map<String, AlgorithmDescriptor> m, List<String> problems) {
        ClassLoader loader;
        try {
            loader = ClassLoader.getSystemClassLoader();
        } catch (RuntimeException | Error e) {
            return; // too early in start-up: no extensions
        }
        try {
            java.util.Iterator<AlgorithmProvider> it = ServiceLoader.load(AlgorithmProvider.class, loader).iterator();
            while (true) {
                AlgorithmProvider provider;
                try {
                    if (!it.hasNext()) {
                        break;
                    }
                    provider = it.next();
                } catch (ServiceConfigurationError e) {
                    problems.add("algorithm provider skipped: " + e.getMessage());
                    continue;
                }
                try {
                    for (AlgorithmDescriptor d : provider.algorithms()) {
                        if (m.containsKey(d.name())) {
                            problems.add(provider.getClass().getName() + ": algorithm '" + d.name()
                                    + "' clashes with an existing one and is ignored");
                        } else {
                            m.put(d.name(), d);
                        }
                    }
                } catch (RuntimeException | LinkageError e) {
                    problems.add(provider.getClass().getName() + " skipped: " + e);
                }
            }
        } catch (ServiceConfigurationError | RuntimeException e) {
            problems.add("algorithm providers could not be listed: " + e);
        }
    }

    /** Why some provider algorithms were not registered (empty normally). */
    public static List<String> extensionProblems() {
        return EXTENSION_PROBLEMS;
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
