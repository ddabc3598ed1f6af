package dev.ccagent.agent.netty;

import dev.ccagent.agent.log.AgentLog;
import dev.ccagent.agent.runtime.AgentRuntime;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The application's settings of each native quiche config, captured at the end of
 * {@code QuicheConfig}'s constructor, or (for a config built before the agent was attached) read from
 * quiche's memory at its first connection ({@link NettyConfigLayout}), and forgotten at its
 * {@code free()}: what a connection keeps when the agent leaves it alone, and what is put back on the
 * shared config after the agent created a connection with its own choice ({@link NettyAlgorithmChoice}).
 */
final class NettyConfigs {

    /**
     * The application's settings of each native quiche config, by its address (from QuicheConfig's
     * constructor; removed by {@code QuicheConfig.free()}). At most {@link #MAX_CONFIGS}: beyond that a
     * new config is not remembered and its connections keep the application's settings (logged once).
     */
    static final Map<Long, AppSettings> CONFIGS = new ConcurrentHashMap<>();
    static final int MAX_CONFIGS = 4096;

    /** Where {@link AppSettings} came from: the constructor's arguments. */
    static final String FROM_CONSTRUCTOR = "constructor";
    /** ... or quiche's memory of a config built before the agent was attached. */
    static final String FROM_LIVE_CONFIG = "read from the live config";

    /** What the application configured on one native config (quiche defaults where it left a value null). */
    static final class AppSettings {
        final int ccId;
        final String ccName;
        final boolean hystart;
        final int cwndPackets;
        /** {@link #FROM_CONSTRUCTOR} or {@link #FROM_LIVE_CONFIG}. */
        final String source;

        AppSettings(int ccId, String ccName, boolean hystart, int cwndPackets) {
            this(ccId, ccName, hystart, cwndPackets, FROM_CONSTRUCTOR);
        }

        AppSettings(int ccId, String ccName, boolean hystart, int cwndPackets, String source) {
            this.ccId = ccId;
            this.ccName = ccName;
            this.hystart = hystart;
            this.cwndPackets = cwndPackets;
            this.source = source;
        }
    }

    /**
     * The application's settings of the native config at {@code address}: those its constructor was
     * given, else (a config built before the agent) those read from quiche's memory now, kept for its
     * next connections; null when neither is possible ({@code layout.problem} says why).
     */
    static AppSettings settingsOf(NettyConfigLayout layout, long address) throws Throwable {
        AppSettings app = CONFIGS.get(address);
        if (app != null || layout.problem != null) {
            return app;
        }
        app = layout.read(address);
        if (app != null && (CONFIGS.size() < MAX_CONFIGS || CONFIGS.containsKey(address))) {
            CONFIGS.put(address, app);
            AgentLog.info("netty: quiche config 0x" + Long.toHexString(address) + " predates the agent; its settings,"
                    + " read from quiche: algorithm " + app.ccName.toLowerCase(java.util.Locale.ROOT) + ", hystart "
                    + (app.hystart ? "on" : "off") + ", initial window " + app.cwndPackets + " packets");
        }
        return app;
    }

    /** After {@code QuicheConfig}'s constructor: remembers the application's settings of that native config. */
    static void onConfig(Class<?> configClass, long address, Boolean hystart, Object cc, Integer cwnd) {
        try {
            NettyQuiche q = NettyQuiche.of(configClass);
            String name = cc == null ? "default" : ((Enum<?>) cc).name();
            int id = cc == null ? NettyQuiche.CUBIC : q.nettyIdOf(name);
            if (CONFIGS.size() >= MAX_CONFIGS && !CONFIGS.containsKey(address)) {
                AgentLog.warnOnce("netty-configs-full", "netty: more than " + MAX_CONFIGS + " live quiche configs;"
                        + " connections of further configs keep the application's settings", null);
                return;
            }
            CONFIGS.put(address, new AppSettings(id, name, hystart == null || hystart, cwnd == null ? 10 : cwnd,
                    FROM_CONSTRUCTOR));
            if (cc != null && "BBR".equals(name) && q.bbrRefusal != null) {
                AgentLog.warnOnce("netty-app-bbr:" + q.packageName,
                        "netty: the application selects BBR, which Netty passes to quiche " + q.quicheVersion
                                + " as id " + id + ": " + q.bbrRefusal + "; connections that keep the application's"
                                + " algorithm will hit that", null);
            }
        } catch (Throwable t) {
            AgentRuntime.recordFallback("netty config capture",
                    "connections of this config keep the application's settings unless they can be read from quiche", t);
        }
    }

    /** At the start of {@code QuicheConfig.free()}: the native config goes away, and so does what we kept of it. */
    static void onConfigFreed(long address) {
        try {
            if (address != -1 && address != 0) {
                CONFIGS.remove(address);
            }
        } catch (Throwable t) {
            AgentRuntime.recordFallback("netty config release", "nothing changes for any connection", t);
        }
    }

    private NettyConfigs() {
    }
}
