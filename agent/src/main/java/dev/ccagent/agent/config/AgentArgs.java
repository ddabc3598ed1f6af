package dev.ccagent.agent.config;

import dev.ccagent.agent.log.AgentLog;
import dev.ccagent.cc.registry.Algorithms;
import dev.ccagent.cc.CcConfigException;
import dev.ccagent.cc.CcOptions;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;

/**
 * The agent's argument grammar, shared by {@code -javaagent:ccagent.jar=ARGS}, late attach and
 * the CLI:
 *
 * <pre>
 *   ARGS  := ENTRY (';' ENTRY)*
 *   ENTRY := KEY '=' VALUE
 * </pre>
 *
 * e.g. {@code cc=bbr1;canary=bbr3:10%;opt.bbr1.quantum-ratio=0.002;jfr=rec.jfr;log=info}, or
 * {@code config=/path/file.properties} for a file with the same keys (entries given beside it
 * override the file). Every problem is collected, each as one line naming the key and the value;
 * a configuration with any problem is not used at all (the agent then fails open).
 */
public final class AgentArgs {

    /** Keys and what they take, for errors and help. */
    public static final Map<String, String> KEYS;

    static {
        Map<String, String> k = new LinkedHashMap<>();
        k.put("cc", "default algorithm for new connections: " + String.join("|", Algorithms.names()) + "|stock"
                + " (stock: the library's own; still measured and watched unless measure=off and detect=off)");
        k.put("canary", "ALGO:PCT%[,ALGO:PCT%...] share of new connections per algorithm, e.g. bbr3:10%");
        k.put("canary.salt", "secret per deployment that keys the canary hash, so clients cannot choose their arm"
                + " (default none: arms recomputable from connection ids alone; see docs/safety-control.md)");
        k.put("opt.ALGO.KEY", "option KEY of algorithm ALGO, e.g. opt.bbr1.quantum-ratio=0.002");
        k.put("config", "a properties file with these keys");
        k.put("log", "off|error|warn|info|debug (default info)");
        k.put("jfr", "start a JFR recording with ccagent's settings, written to this file at exit");
        k.put("jfr.max-size", "bound of that recording, e.g. 100MiB (default 250MiB)");
        k.put("jfr.max-age", "bound of that recording, e.g. 30min (default 1h)");
        k.put("jfr.state-connections", "at most this many periodic CongestionState events a period; beyond as many"
                + " active connections a rotating sample, each event weighted (default "
                + AgentConfig.DEFAULT_STATE_CONNECTIONS + ", 1.." + AgentConfig.MAX_STATE_CONNECTIONS + ")");
        k.put("fix.kwik-stream-stall", "on|off: close kwik 0.10.7-0.10.9's stream-send race (default on where kwik has it)");
        k.put("fix.kwik-loss-timer", "on|off: work around kwik's loss-detection-timer race (default off)");
        k.put("targets", "libraries to instrument: kwik,netty (default both)");
        k.put("profile-on-spin", "directory for async-profiler captures when a send-loop spin is detected");
        k.put("profile-on-spin.duration", "length of one capture, e.g. 10s (default 10s, 1s..5min)");
        k.put("profile-on-spin.every", "at most one capture per this interval, e.g. 10min (default 10min)");
        k.put("detect", "on|off: per-connection send-loop counters and the spin detector, also on stock connections (default on)");
        k.putAll(NettyConfig.KEYS);
        k.putAll(CanaryConfig.KEYS);
        KEYS = java.util.Collections.unmodifiableMap(k);
    }

    /** Keys whose values are never shown (status, JMX, error lines). */
    public static final Set<String> SECRET_KEYS = Set.of("canary.salt");

    static final Set<String> KNOWN_TARGETS = Set.of("kwik", "netty");

    /** The outcome: a configuration, or the problems that stop it from being used. */
    public static final class Result {
        private final AgentConfig config;
        private final List<String> problems;
        private final Map<String, String> entries;

        Result(AgentConfig config, List<String> problems) {
            this(config, problems, Map.of());
        }

        Result(AgentConfig config, List<String> problems, Map<String, String> entries) {
            this.config = problems.isEmpty() ? config : null;
            this.problems = List.copyOf(problems);
            this.entries = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(entries));
        }

        /** The raw entries (only from {@link AgentArgs#parseEntries}). */
        public Map<String, String> entries() {
            return entries;
        }

        public boolean ok() {
            return problems.isEmpty();
        }

        /** The configuration; null when there were problems. */
        public AgentConfig config() {
            return config;
        }

        /** One line per problem, each naming the key and the bad value. */
        public List<String> problems() {
            return problems;
        }
    }

    private AgentArgs() {
    }

    /** Parses agent arguments (null or blank: defaults, i.e. stock everywhere). */
    public static Result parse(String args) {
        List<String> problems = new ArrayList<>();
        Map<String, String> given = split(args, problems);
        Map<String, String> merged = new LinkedHashMap<>();
        String file = given.get("config");
        if (file != null) {
            merged.putAll(loadFile(file, problems));
        }
        merged.putAll(given);
        merged.remove("config");
        return build(merged, problems);
    }

    /**
     * Splits {@code KEY=VALUE;...} without validating the values: for merging a change into a
     * running configuration before {@link #parse(Map)} validates the whole.
     */
    public static Result parseEntries(String args) {
        List<String> problems = new ArrayList<>();
        Map<String, String> entries = split(args, problems);
        return new Result(null, problems, entries);
    }

    /** Parses an already split map (the CLI's {@code set KEY=VALUE}, JMX); same rules as {@link #parse}. */
    public static Result parse(Map<String, String> entries) {
        List<String> problems = new ArrayList<>();
        Map<String, String> merged = new LinkedHashMap<>();
        if (entries.containsKey("config")) {
            merged.putAll(loadFile(entries.get("config"), problems));
        }
        for (Map.Entry<String, String> e : entries.entrySet()) {
            if (!e.getKey().equals("config")) {
                merged.put(e.getKey().strip(), e.getValue() == null ? "" : e.getValue().strip());
            }
        }
        return build(merged, problems);
    }

    static Map<String, String> split(String args, List<String> problems) {
        Map<String, String> out = new LinkedHashMap<>();
        if (args == null || args.isBlank()) {
            return out;
        }
        for (String entry : args.split(";")) {
            String e = entry.strip();
            if (e.isEmpty()) {
                continue;
            }
            int eq = e.indexOf('=');
            if (eq <= 0) {
                problems.add("argument '" + e + "' is not KEY=VALUE (entries are separated by ';')");
                continue;
            }
            String key = e.substring(0, eq).strip();
            String value = e.substring(eq + 1).strip();
            if (out.containsKey(key)) {
                problems.add("key " + key + " is given twice ('" + out.get(key) + "' and '" + value + "')");
                continue;
            }
            out.put(key, value);
        }
        return out;
    }

    private static Map<String, String> loadFile(String file, List<String> problems) {
        Map<String, String> out = new LinkedHashMap<>();
        Path path;
        try {
            path = Path.of(file);
        } catch (InvalidPathException e) {
            problems.add("config=" + file + ": not a valid path");
            return out;
        }
        if (!Files.isRegularFile(path)) {
            problems.add("config=" + file + ": no such file");
            return out;
        }
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(path, StandardCharsets.UTF_8)) {
            p.load(r);
        } catch (IOException | IllegalArgumentException e) {
            problems.add("config=" + file + ": cannot be read as a properties file: " + e.getMessage());
            return out;
        }
        for (String name : new TreeMap<>(p).keySet().stream().map(Object::toString).toList()) {
            if (name.equals("config")) {
                problems.add("config=" + file + ": a config file cannot name another config file");
                continue;
            }
            out.put(name.strip(), p.getProperty(name).strip());
        }
        return out;
    }

    private static Result build(Map<String, String> entries, List<String> problems) {
        String defaultAlgorithm = AgentConfig.STOCK;
        List<String[]> canary = new ArrayList<>();
        Map<String, Map<String, String>> algorithmOptions = new LinkedHashMap<>();
        AgentLog.Level level = AgentLog.Level.INFO;
        Path jfr = null;
        long jfrMaxSize = 250L << 20;
        long jfrMaxAge = 3_600_000_000_000L;
        int stateConnections = AgentConfig.DEFAULT_STATE_CONNECTIONS;
        boolean fixStall = true; // kwik's race stalls downloads (docs/kwik.md); =off turns the fix off
        boolean fixLossTimer = false;
        Set<String> targets = new LinkedHashSet<>(KNOWN_TARGETS);
        Path profileDir = null;
        long profileDuration = 10_000_000_000L;
        long profileEvery = 600_000_000_000L;
        boolean detect = true;
        long[] saltKey = null;
        NettyConfig.Builder netty = new NettyConfig.Builder();
        CanaryConfig.Builder canaryConfig = new CanaryConfig.Builder();

        for (Map.Entry<String, String> e : entries.entrySet()) {
            String key = e.getKey();
            String value = e.getValue();
            try {
                switch (key) {
                    case "cc":
                        defaultAlgorithm = algorithmName(value);
                        break;
                    case "canary":
                        canary = parseCanary(value);
                        break;
                    case "log":
                        level = AgentLog.Level.parse(value);
                        if (level == null) {
                            throw new CcConfigException("expected off|error|warn|info|debug");
                        }
                        break;
                    case "jfr":
                        jfr = path(value);
                        break;
                    case "jfr.max-size":
                        jfrMaxSize = InRange.bytes(value, 1 << 20, Long.MAX_VALUE, "at least 1MiB");
                        break;
                    case "jfr.max-age":
                        jfrMaxAge = InRange.durationNanos(value, 1_000_000_000L, Long.MAX_VALUE, "at least 1s");
                        break;
                    case "jfr.state-connections":
                        stateConnections = (int) InRange.wholeNumber(value, 1, AgentConfig.MAX_STATE_CONNECTIONS,
                                "connections");
                        break;
                    case "fix.kwik-stream-stall":
                        fixStall = onOff(value);
                        break;
                    case "fix.kwik-loss-timer":
                        fixLossTimer = onOff(value);
                        break;
                    case "targets":
                        targets = parseTargets(value);
                        break;
                    case "profile-on-spin":
                        if (value.indexOf(',') >= 0) {
                            throw new CcConfigException("a comma in the directory name is refused (it would be spliced"
                                    + " into async-profiler's comma-separated options)");
                        }
                        profileDir = path(value);
                        break;
                    case "profile-on-spin.duration":
                        profileDuration = InRange.durationNanos(value, 1_000_000_000L, 300_000_000_000L,
                                "between 1s and 5min");
                        break;
                    case "profile-on-spin.every":
                        profileEvery = InRange.durationNanos(value, 1_000_000_000L, Long.MAX_VALUE, "at least 1s");
                        break;
                    case "detect":
                        detect = onOff(value);
                        break;
                    case "canary.salt":
                        if (value.length() < 8) {
                            throw new CcConfigException("a salt needs at least 8 characters");
                        }
                        saltKey = CanaryConfig.saltKey(value);
                        break;
                    default:
                        if (key.startsWith("netty.")) {
                            netty.accept(key, value);
                        } else if (CanaryConfig.owns(key)) {
                            canaryConfig.accept(key, value);
                        } else if (key.startsWith("opt.")) {
                            int dot = key.indexOf('.', 4);
                            if (dot < 0 || dot == key.length() - 1) {
                                throw new CcConfigException("expected opt.ALGO.KEY, e.g. opt.bbr1.quantum-ratio");
                            }
                            String algorithm = algorithmName(key.substring(4, dot));
                            if (AgentConfig.STOCK.equals(algorithm)) {
                                throw new CcConfigException("the stock algorithm takes no options");
                            }
                            algorithmOptions.computeIfAbsent(algorithm, a -> new LinkedHashMap<>())
                                    .put(key.substring(dot + 1), value);
                        } else {
                            problems.add("unknown key '" + key + "'; known keys: " + String.join(", ", KEYS.keySet()));
                        }
                }
            } catch (CcConfigException ex) {
                problems.add(key + "=" + (SECRET_KEYS.contains(key) ? "(hidden)" : value) + ": " + ex.getMessage());
            }
        }

        Map<String, CcOptions> validated = new LinkedHashMap<>();
        for (Map.Entry<String, Map<String, String>> o : algorithmOptions.entrySet()) {
            try {
                validated.put(o.getKey(), Algorithms.options(o.getKey(), o.getValue()));
            } catch (CcConfigException ex) {
                problems.add("opt." + o.getKey() + ": " + ex.getMessage());
            }
        }
        List<AgentConfig.Arm> canaryArms = new ArrayList<>();
        double canaryTotal = 0;
        for (String[] c : canary) {
            double pct = Double.parseDouble(c[1]);
            canaryTotal += pct;
            canaryArms.add(arm("canary", c[0], pct, validated));
        }
        if (canaryTotal > 100.0 + 1e-9) {
            problems.add("canary=" + entries.get("canary") + ": shares add up to " + canaryTotal + "%, more than 100%");
        }
        AgentConfig.Arm defaultArm = arm("default", defaultAlgorithm, Math.max(0, 100 - canaryTotal), validated);
        NettyConfig nettyConfig = netty.build(problems);
        if (!problems.isEmpty()) {
            return new Result(null, problems);
        }
        return new Result(new AgentConfig(defaultArm, canaryArms, level, jfr, jfrMaxSize, jfrMaxAge, fixStall,
                targets, profileDir, new LinkedHashMap<>(entries))
                .withDetection(detect, profileDuration, profileEvery).withNetty(nettyConfig)
                .withCanarySaltKey(saltKey).withFixKwikLossTimer(fixLossTimer).withStateConnections(stateConnections)
                .withCanary(canaryConfig.build(problems)), problems);
    }

    private static AgentConfig.Arm arm(String label, String algorithm, double pct, Map<String, CcOptions> validated) {
        if (AgentConfig.STOCK.equals(algorithm)) {
            return new AgentConfig.Arm(label, algorithm, null, pct);
        }
        CcOptions options = validated.get(algorithm);
        if (options == null) {
            options = Algorithms.options(algorithm, Map.of());
        }
        return new AgentConfig.Arm(label, algorithm, options, pct);
    }

    private static String algorithmName(String value) {
        String name = value.strip().toLowerCase(Locale.ROOT);
        if (name.equals(AgentConfig.STOCK)) {
            return name;
        }
        Algorithms.descriptor(name); // throws naming the known algorithms
        return name;
    }

    static List<String[]> parseCanary(String value) {
        return parseCanary(value, AgentArgs::algorithmName, "bbr3:10%");
    }

    /**
     * The split grammar {@code ALGO:PCT%[,ALGO:PCT%...]}, shared by {@code canary=} and
     * {@code netty.canary=}; {@code names} validates (and normalises) each algorithm name.
     *
     * @return pairs {algorithm, percent}
     */
    static List<String[]> parseCanary(String value, java.util.function.UnaryOperator<String> names, String example) {
        List<String[]> arms = new ArrayList<>();
        Set<String> seen = new LinkedHashSet<>();
        for (String part : value.split(",")) {
            String p = part.strip();
            int colon = p.lastIndexOf(':');
            if (colon <= 0 || !p.endsWith("%")) {
                throw new CcConfigException("expected ALGO:PCT%, e.g. " + example);
            }
            String algorithm = names.apply(p.substring(0, colon));
            if (!seen.add(algorithm)) {
                throw new CcConfigException(algorithm + " appears twice");
            }
            String pctText = p.substring(colon + 1, p.length() - 1).strip();
            double pct;
            try {
                pct = Double.parseDouble(pctText);
            } catch (NumberFormatException e) {
                throw new CcConfigException("'" + pctText + "' is not a percentage");
            }
            if (!(pct > 0 && pct <= 100)) {
                throw new CcConfigException("share " + pctText + "% must be in (0, 100]");
            }
            arms.add(new String[] {algorithm, Double.toString(pct)});
        }
        return arms;
    }

    private static Set<String> parseTargets(String value) {
        Set<String> out = new LinkedHashSet<>();
        for (String t : value.split(",")) {
            String name = t.strip().toLowerCase(Locale.ROOT);
            if (!KNOWN_TARGETS.contains(name)) {
                throw new CcConfigException("unknown target '" + name + "'; known: " + String.join(", ", KNOWN_TARGETS));
            }
            out.add(name);
        }
        return out;
    }

    static boolean onOff(String value) {
        switch (value.strip().toLowerCase(Locale.ROOT)) {
            case "on": case "true": case "yes":
                return true;
            case "off": case "false": case "no":
                return false;
            default:
                throw new CcConfigException("expected on|off");
        }
    }

    private static Path path(String value) {
        if (value.isBlank()) {
            throw new CcConfigException("empty path");
        }
        try {
            return Path.of(value);
        } catch (InvalidPathException e) {
            throw new CcConfigException("not a valid path");
        }
    }
}
