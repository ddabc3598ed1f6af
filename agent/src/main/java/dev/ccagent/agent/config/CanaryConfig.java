package dev.ccagent.agent.config;

import dev.ccagent.cc.CcConfigException;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The per-connection measurement and the canary guardrail (see docs/canary.md):
 *
 * <pre>
 *   measure=on|off                 measure every connection of every arm, stock ones too (default on)
 *   summary.period=10s             ConnectionSummary of long-lived connections every period (1s..1h)
 *   guard=on|off                   roll back a canary arm that is worse by more than the margins (default off)
 *   guard.alpha=0.01               bound on rolling back an arm that is no worse, over the whole run (guard.p-value: old name)
 *   guard.min-connections=20       pairs (canary close, baseline close) before any verdict (5..2048)
 *   guard.window=5min              a pair's two closes are at most this far apart (10s..24h); also the MXBeans' RTT window
 *   guard.loss-ratio=2.0           margin: a pair counts when the canary's loss rate > ratio × partner's + 0.5 points
 *   guard.rtt-p95-increase=10%     margin: a pair counts when the canary's RTT p95 > (1 + this) × partner's
 *   guard.goodput-decrease=10%     margin: a pair counts when the canary's goodput < (1 - this) × partner's
 *   guard.spin=on|off              CPU spin episodes (server CPU without progress) are evidence (default on)
 *   guard.spin-connections=3       canary connections with a CPU spin episode before a spin verdict (1..64)
 * </pre>
 */
public final class CanaryConfig {

    /**
     * The most {@code guard.min-connections}: the guard keeps the newest 2048 pairs per arm for the medians
     * its evidence shows (and records closes into a 2048-entry ring per arm), so a larger minimum would
     * decide on more pairs than the evidence could show.
     */
    public static final int MAX_MIN_CONNECTIONS = 2048;
    /** The most {@code guard.spin-connections}: the guard remembers 64 spinning connections per arm. */
    public static final int MAX_SPIN_CONNECTIONS = 64;

    public static final CanaryConfig DEFAULT = new Builder().build(new java.util.ArrayList<>());

    static final Map<String, String> KEYS;

    static {
        Map<String, String> k = new LinkedHashMap<>();
        k.put("measure", "on|off: measure every connection of every arm (ConnectionSummary, per-arm MXBeans; default on;"
                + " a kwik connection keeps about 7 kB of heap for it, none with measure=off and detect=off)");
        k.put("summary.period", "ConnectionSummary period of long-lived connections, e.g. 10s (default 10s, 1s..1h)");
        k.put("guard", "on|off: stop assigning new connections to a canary arm worse than the default arm by more than the margins (default off)");
        k.put("guard.alpha", "bound on the probability of rolling back an arm that is no worse, over the whole run (default 0.01, in (0, 0.2])");
        k.put("guard.p-value", "the former name of guard.alpha (same meaning)");
        k.put("guard.min-connections", "pairs of closed connections (canary, baseline) before any verdict (default 20, 5.." + MAX_MIN_CONNECTIONS + ")");
        k.put("guard.window", "the most time between the closes of a canary connection and its baseline partner, e.g. 5min (default 5min, 10s..24h)");
        k.put("guard.loss-ratio", "margin: a canary connection is worse when its loss rate is above this multiple of its partner's + 0.5 points (default 2.0, > 1)");
        k.put("guard.rtt-p95-increase", "margin: a canary connection is worse when its RTT p95 is above its partner's by more than this, e.g. 10% (default 10%)");
        k.put("guard.goodput-decrease", "margin: a canary connection is worse when its goodput is below its partner's by more than this, e.g. 10% (default 10%, below 100%)");
        k.put("guard.spin", "on|off: CPU spin episodes (server CPU burned without progress) are evidence for the guard (default on)");
        k.put("guard.spin-connections", "canary connections with a CPU spin episode before a spin verdict (default 3, 1.." + MAX_SPIN_CONNECTIONS + ")");
        KEYS = java.util.Collections.unmodifiableMap(k);
    }

    private final boolean measure;
    private final long summaryPeriodNanos;
    private final boolean guard;
    private final int minConnections;
    private final long windowNanos;
    private final double lossRatio;
    private final double rttP95Increase;
    private final double alpha;
    private final boolean spin;
    private final double goodputDecrease;
    private final int spinConnections;

    private CanaryConfig(Builder b) {
        this.measure = b.measure;
        this.summaryPeriodNanos = b.summaryPeriod;
        this.guard = b.guard;
        this.minConnections = b.minConnections;
        this.windowNanos = b.window;
        this.lossRatio = b.lossRatio;
        this.rttP95Increase = b.rttIncrease;
        this.alpha = b.alpha;
        this.spin = b.spin;
        this.goodputDecrease = b.goodputDecrease;
        this.spinConnections = b.spinConnections;
    }

    public boolean measure() { return measure; }
    public long summaryPeriodNanos() { return summaryPeriodNanos; }
    public boolean guard() { return guard; }
    public int minConnections() { return minConnections; }
    public long windowNanos() { return windowNanos; }
    public double lossRatio() { return lossRatio; }
    /** Relative increase, e.g. 0.5 for 50%. */
    public double rttP95Increase() { return rttP95Increase; }
    /** The bound on rolling back an arm that is no worse, over the whole run. */
    public double alpha() { return alpha; }
    public boolean spin() { return spin; }
    /** Relative decrease, e.g. 0.1 for 10%. */
    public double goodputDecrease() { return goodputDecrease; }
    public int spinConnections() { return spinConnections; }

    static boolean owns(String key) {
        return KEYS.containsKey(key);
    }

    static final class Builder {
        private boolean measure = true;
        private long summaryPeriod = 10_000_000_000L;
        private boolean guard;
        private int minConnections = 20;
        private long window = 300_000_000_000L;
        private double lossRatio = 2.0;
        private double rttIncrease = 0.1;
        private double alpha = 0.01;
        private boolean spin = true;
        private double goodputDecrease = 0.1;
        private int spinConnections = 3;

        void accept(String key, String value) {
            switch (key) {
                case "measure":
                    measure = AgentArgs.onOff(value);
                    break;
                case "summary.period":
                    summaryPeriod = InRange.durationNanos(value, 1_000_000_000L, 3_600_000_000_000L,
                            "between 1s and 1h");
                    break;
                case "guard":
                    guard = AgentArgs.onOff(value);
                    break;
                case "guard.min-connections":
                    minConnections = connections(value, 5, MAX_MIN_CONNECTIONS, " (pairs before a verdict; the guard"
                            + " keeps the newest " + MAX_MIN_CONNECTIONS + " pairs per arm for its evidence)");
                    break;
                case "guard.window":
                    window = InRange.durationNanos(value, 10_000_000_000L, 86_400_000_000_000L, "between 10s and 24h");
                    break;
                case "guard.loss-ratio":
                    lossRatio = accepted(number(value), r -> r > 1 && r <= 1000, "a ratio above 1, e.g. 2.0");
                    break;
                case "guard.rtt-p95-increase":
                    rttIncrease = accepted(fraction(value), i -> i > 0 && i <= 100, "an increase above 0, e.g. 10% or 0.1");
                    break;
                case "guard.goodput-decrease":
                    goodputDecrease = accepted(fraction(value), d -> d > 0 && d < 1,
                            "a decrease above 0 and below 100%, e.g. 10% or 0.1");
                    break;
                case "guard.alpha":
                case "guard.p-value":
                    alpha = accepted(number(value), a -> a > 0 && a <= 0.2,
                            "in (0, 0.2], e.g. 0.01 (the bound on a false rollback over the whole run)");
                    break;
                case "guard.spin-connections":
                    spinConnections = connections(value, 1, MAX_SPIN_CONNECTIONS, "");
                    break;
                case "guard.spin":
                    spin = AgentArgs.onOff(value);
                    break;
                default:
                    throw new CcConfigException("unknown key");
            }
        }

        /**
         * A whole number of connections from {@code min} to {@code max}; one outside is refused naming the range,
         * followed by {@code why}.
         */
        private static int connections(String value, int min, int max, String why) {
            int n;
            try {
                n = Integer.parseInt(value.strip());
            } catch (NumberFormatException e) {
                throw new CcConfigException("expected a whole number of connections");
            }
            if (n < min || n > max) {
                throw new CcConfigException(n + " is outside " + min + ".." + max + why);
            }
            return n;
        }

        /** {@code v} when {@code ok} holds for it; else refused with what was {@code expected}. */
        private static double accepted(double v, java.util.function.DoublePredicate ok, String expected) {
            if (!ok.test(v)) {
                throw new CcConfigException(expected);
            }
            return v;
        }

        /** A fraction given as a percentage ({@code 10%}) or as a number ({@code 0.1}). */
        private static double fraction(String value) {
            String v = value.strip();
            return v.endsWith("%") ? number(v.substring(0, v.length() - 1)) / 100 : number(v);
        }

        private static double number(String value) {
            try {
                double d = Double.parseDouble(value.strip());
                if (Double.isNaN(d) || Double.isInfinite(d)) {
                    throw new NumberFormatException();
                }
                return d;
            } catch (NumberFormatException e) {
                throw new CcConfigException("'" + value + "' is not a number");
            }
        }

        CanaryConfig build(List<String> problems) {
            return new CanaryConfig(this);
        }
    }

    /**
     * The SipHash key of a {@code canary.salt} (used by {@code select.AlgorithmSelector}): the first 16
     * bytes of SHA-256 of its UTF-8 bytes, as two little-endian longs.
     */
    public static long[] saltKey(String salt) {
        try {
            byte[] d = java.security.MessageDigest.getInstance("SHA-256")
                    .digest(salt.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            java.nio.ByteBuffer le = java.nio.ByteBuffer.wrap(d).order(java.nio.ByteOrder.LITTLE_ENDIAN);
            return new long[] {le.getLong(0), le.getLong(8)};
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }
}
