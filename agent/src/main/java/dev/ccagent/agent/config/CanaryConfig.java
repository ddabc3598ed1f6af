package dev.ccagent.agent.config;

import dev.ccagent.cc.CcConfigException;
import dev.ccagent.cc.Units;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The per-connection measurement and the canary guardrail (see docs/canary.md):
 *
 * <pre>
 *   measure=on|off                 measure every connection of every arm, stock ones too (default on)
 *   summary.period=10s             ConnectionSummary of long-lived connections every period (1s..1h)
 *   guard=on|off                   roll back a canary arm that is significantly worse (default off)
 *   guard.min-connections=20       closed connections per arm within the window before the guard judges
 *   guard.window=5min              connections closed within this window are compared (10s..24h)
 *   guard.loss-ratio=2.0           worse: canary's median loss rate above ratio × baseline's (and +0.5 points)
 *   guard.rtt-p95-increase=50%     worse: canary's median per-connection RTT p95 above baseline's by this
 *   guard.p-value=0.01             one-sided Mann–Whitney U p-value below which a difference counts
 *   guard.spin=on|off              a spin / send-loop alarm on a canary connection rolls the arm back (default on)
 * </pre>
 */
public final class CanaryConfig {

    public static final CanaryConfig DEFAULT = new Builder().build(new java.util.ArrayList<>());

    static final Map<String, String> KEYS;

    static {
        Map<String, String> k = new LinkedHashMap<>();
        k.put("measure", "on|off: measure every connection of every arm (ConnectionSummary, per-arm MXBeans; default on)");
        k.put("summary.period", "ConnectionSummary period of long-lived connections, e.g. 10s (default 10s, 1s..1h)");
        k.put("guard", "on|off: stop assigning new connections to a canary arm significantly worse than the default arm (default off)");
        k.put("guard.min-connections", "closed connections per arm within the window before the guard judges (default 20, at least 5)");
        k.put("guard.window", "the guard compares connections closed within this window, e.g. 5min (default 5min, 10s..24h)");
        k.put("guard.loss-ratio", "canary median loss rate above this multiple of the baseline's is worse (default 2.0, > 1)");
        k.put("guard.rtt-p95-increase", "canary median RTT p95 above the baseline's by this much is worse, e.g. 50% (default 50%)");
        k.put("guard.p-value", "significance of the one-sided Mann-Whitney U test (default 0.01, in (0, 0.5])");
        k.put("guard.spin", "on|off: a spin or send-loop alarm on a canary connection rolls the arm back (default on)");
        KEYS = java.util.Collections.unmodifiableMap(k);
    }

    private final boolean measure;
    private final long summaryPeriodNanos;
    private final boolean guard;
    private final int minConnections;
    private final long windowNanos;
    private final double lossRatio;
    private final double rttP95Increase;
    private final double pValue;
    private final boolean spin;

    private CanaryConfig(Builder b) {
        this.measure = b.measure;
        this.summaryPeriodNanos = b.summaryPeriod;
        this.guard = b.guard;
        this.minConnections = b.minConnections;
        this.windowNanos = b.window;
        this.lossRatio = b.lossRatio;
        this.rttP95Increase = b.rttIncrease;
        this.pValue = b.pValue;
        this.spin = b.spin;
    }

    public boolean measure() { return measure; }
    public long summaryPeriodNanos() { return summaryPeriodNanos; }
    public boolean guard() { return guard; }
    public int minConnections() { return minConnections; }
    public long windowNanos() { return windowNanos; }
    public double lossRatio() { return lossRatio; }
    /** Relative increase, e.g. 0.5 for 50%. */
    public double rttP95Increase() { return rttP95Increase; }
    public double pValue() { return pValue; }
    public boolean spin() { return spin; }

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
        private double rttIncrease = 0.5;
        private double pValue = 0.01;
        private boolean spin = true;

        void accept(String key, String value) {
            switch (key) {
                case "measure":
                    measure = AgentArgs.onOff(value);
                    break;
                case "summary.period":
                    summaryPeriod = Units.parseDurationNanos(value);
                    if (summaryPeriod < 1_000_000_000L || summaryPeriod > 3_600_000_000_000L) {
                        throw new CcConfigException("between 1s and 1h");
                    }
                    break;
                case "guard":
                    guard = AgentArgs.onOff(value);
                    break;
                case "guard.min-connections":
                    try {
                        minConnections = Integer.parseInt(value.strip());
                    } catch (NumberFormatException e) {
                        throw new CcConfigException("expected a whole number of connections");
                    }
                    if (minConnections < 5 || minConnections > 100_000) {
                        throw new CcConfigException("between 5 and 100000 (the rank test needs at least 5 per arm)");
                    }
                    break;
                case "guard.window":
                    window = Units.parseDurationNanos(value);
                    if (window < 10_000_000_000L || window > 86_400_000_000_000L) {
                        throw new CcConfigException("between 10s and 24h");
                    }
                    break;
                case "guard.loss-ratio":
                    lossRatio = number(value);
                    if (!(lossRatio > 1 && lossRatio <= 1000)) {
                        throw new CcConfigException("a ratio above 1, e.g. 2.0");
                    }
                    break;
                case "guard.rtt-p95-increase":
                    String v = value.strip();
                    rttIncrease = v.endsWith("%") ? number(v.substring(0, v.length() - 1)) / 100 : number(v);
                    if (!(rttIncrease > 0 && rttIncrease <= 100)) {
                        throw new CcConfigException("an increase above 0, e.g. 50% or 0.5");
                    }
                    break;
                case "guard.p-value":
                    pValue = number(value);
                    if (!(pValue > 0 && pValue <= 0.5)) {
                        throw new CcConfigException("in (0, 0.5], e.g. 0.01");
                    }
                    break;
                case "guard.spin":
                    spin = AgentArgs.onOff(value);
                    break;
                default:
                    throw new CcConfigException("unknown key");
            }
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
}
