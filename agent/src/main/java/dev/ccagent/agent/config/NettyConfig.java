package dev.ccagent.agent.config;

import dev.ccagent.cc.CcConfigException;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The {@code netty.*} keys: Netty QUIC runs congestion control inside native quiche, so its arms
 * name quiche's algorithms ({@code reno|cubic|bbr}), not ours, and have their own split:
 *
 * <pre>
 *   netty.cc=reno|cubic|bbr|stock         every connection (default stock: the application's choice)
 *   netty.canary=bbr:10%[,cubic:5%]       share of connections per quiche algorithm, the rest netty.cc
 *   netty.initial-cwnd=N                  initial congestion window, packets
 *   netty.hystart=on|off
 *   netty.pacing=on|off                   honour quiche's per-datagram send time (default off)
 *   netty.pacing.max-burst=BYTES          bytes a timer wake-up may send ahead of their time (default 16KiB)
 *   netty.stats.period=1s|off             path-stats sampling period (default 1s)
 * </pre>
 *
 * The shared {@code canary=} key keeps naming our Java algorithms (kwik); they cannot run inside quiche.
 */
public final class NettyConfig {

    /** The quiche algorithms an arm may name (besides stock). */
    public static final List<String> ALGORITHMS = List.of("reno", "cubic", "bbr");

    public static final NettyConfig DEFAULT = new Builder().build(new ArrayList<>());

    static final Map<String, String> KEYS;

    static {
        Map<String, String> k = new LinkedHashMap<>();
        k.put("netty.cc", "quiche algorithm for every Netty QUIC connection: reno|cubic|bbr|stock (default stock)");
        k.put("netty.canary", "ALGO:PCT%[,ALGO:PCT%...] share of Netty connections per quiche algorithm, e.g. bbr:10%");
        k.put("netty.initial-cwnd", "initial congestion window of Netty connections, packets");
        k.put("netty.hystart", "on|off: quiche's HyStart++ on Netty connections");
        k.put("netty.pacing", "on|off: send Netty datagrams at quiche's send time (default off)");
        k.put("netty.pacing.max-burst",
                "bytes one pacing wake-up may send ahead of their time (default 16KiB; at least 1 ms at quiche's rate)");
        k.put("netty.stats.period", "period of per-connection path stats, e.g. 1s, or off (default 1s)");
        KEYS = java.util.Collections.unmodifiableMap(k);
    }

    private final AgentConfig.Arm defaultArm;
    private final List<AgentConfig.Arm> canaryArms;
    private final Integer initialCwndPackets;
    private final Boolean hystart;
    private final boolean pacing;
    private final int maxBurstBytes;
    private final long statsPeriodNanos;

    private NettyConfig(AgentConfig.Arm defaultArm, List<AgentConfig.Arm> canaryArms, Integer initialCwndPackets,
                        Boolean hystart, boolean pacing, int maxBurstBytes, long statsPeriodNanos) {
        this.defaultArm = defaultArm;
        this.canaryArms = List.copyOf(canaryArms);
        this.initialCwndPackets = initialCwndPackets;
        this.hystart = hystart;
        this.pacing = pacing;
        this.maxBurstBytes = maxBurstBytes;
        this.statsPeriodNanos = statsPeriodNanos;
    }

    /** The arm of connections no canary claims: a quiche algorithm name or {@code stock}. */
    public AgentConfig.Arm defaultArm() {
        return defaultArm;
    }

    public List<AgentConfig.Arm> canaryArms() {
        return canaryArms;
    }

    /** Whether any arm forces a quiche algorithm. */
    public boolean selectsAlgorithms() {
        return !defaultArm.isStock() || canaryArms.stream().anyMatch(a -> !a.isStock());
    }

    /** Initial congestion window in packets, or null (the application's). */
    public Integer initialCwndPackets() {
        return initialCwndPackets;
    }

    /** HyStart++ on/off, or null (the application's). */
    public Boolean hystart() {
        return hystart;
    }

    public boolean pacing() {
        return pacing;
    }

    public int maxBurstBytes() {
        return maxBurstBytes;
    }

    /** Path-stats period; 0 when off. */
    public long statsPeriodNanos() {
        return statsPeriodNanos;
    }

    /** Whether anything changes a connection's native config. */
    public boolean changesConnections() {
        return selectsAlgorithms() || initialCwndPackets != null || hystart != null;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("netty.cc=").append(defaultArm.algorithm());
        for (AgentConfig.Arm a : canaryArms) {
            sb.append(", netty.canary=").append(a.algorithm()).append(':').append(a.percent()).append('%');
        }
        if (initialCwndPackets != null) {
            sb.append(", netty.initial-cwnd=").append(initialCwndPackets);
        }
        if (hystart != null) {
            sb.append(", netty.hystart=").append(hystart ? "on" : "off");
        }
        sb.append(", netty.pacing=").append(pacing ? "on(max-burst " + maxBurstBytes + "B)" : "off");
        sb.append(", netty.stats.period=").append(statsPeriodNanos == 0 ? "off" : (statsPeriodNanos / 1_000_000) + "ms");
        return sb.toString();
    }

    /** Collects {@code netty.*} entries; {@link #build} validates the whole. */
    static final class Builder {
        private String cc = AgentConfig.STOCK;
        private List<String[]> canary = new ArrayList<>();
        private String canaryText;
        private Integer initialCwnd;
        private Boolean hystart;
        private boolean pacing;
        private int maxBurst = 16 * 1024;
        private long statsPeriod = 1_000_000_000L;

        /** Takes one entry; throws {@link CcConfigException} with the reason when the value is bad. */
        void accept(String key, String value) {
            switch (key) {
                case "netty.cc":
                    cc = algorithm(value);
                    break;
                case "netty.canary":
                    canary = canary(value);
                    canaryText = value;
                    break;
                case "netty.initial-cwnd":
                    initialCwnd = (int) InRange.wholeNumber(value, 2, 10_000, "packets");
                    break;
                case "netty.hystart":
                    hystart = AgentArgs.onOff(value);
                    break;
                case "netty.pacing":
                    pacing = AgentArgs.onOff(value);
                    break;
                case "netty.pacing.max-burst":
                    maxBurst = (int) InRange.bytes(value, 1200, 16 << 20, "expected 1200 bytes to 16MiB");
                    break;
                case "netty.stats.period":
                    String v = value.strip().toLowerCase(Locale.ROOT);
                    if (v.equals("off") || v.equals("0")) {
                        statsPeriod = 0;
                    } else {
                        statsPeriod = InRange.durationNanos(value, 10_000_000L, Long.MAX_VALUE,
                                "at least 10ms (or off)");
                    }
                    break;
                default:
                    throw new CcConfigException("unknown Netty key; known: " + String.join(", ", KEYS.keySet()));
            }
        }

        NettyConfig build(List<String> problems) {
            List<AgentConfig.Arm> arms = new ArrayList<>();
            double total = 0;
            for (String[] c : canary) {
                double pct = Double.parseDouble(c[1]);
                total += pct;
                arms.add(new AgentConfig.Arm("canary", c[0], null, pct));
            }
            if (total > 100.0 + 1e-9) {
                problems.add("netty.canary=" + canaryText + ": shares add up to " + total + "%, more than 100%");
            }
            return new NettyConfig(new AgentConfig.Arm("default", cc, null, Math.max(0, 100 - total)), arms,
                    initialCwnd, hystart, pacing, maxBurst, statsPeriod);
        }

        private static String algorithm(String value) {
            String name = value.strip().toLowerCase(Locale.ROOT);
            if (name.equals(AgentConfig.STOCK) || ALGORITHMS.contains(name)) {
                return name;
            }
            throw new CcConfigException("unknown quiche algorithm '" + value.strip() + "'; Netty QUIC knows "
                    + String.join("|", ALGORITHMS) + "|stock");
        }

        private static List<String[]> canary(String value) {
            return AgentArgs.parseCanary(value, Builder::algorithm, "bbr:10%");
        }
    }
}
