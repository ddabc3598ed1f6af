package dev.ccagent.agent.netty;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.config.NettyConfig;
import dev.ccagent.agent.log.AgentLog;
import dev.ccagent.agent.measure.Guard;
import dev.ccagent.agent.runtime.AgentRuntime;
import dev.ccagent.agent.select.AlgorithmSelector;

/**
 * The algorithm choice of each new Netty QUIC connection: around quiche's connection constructor
 * ({@link NettyHooks#connNew}), the chosen algorithm (and initial window, HyStart) is set on the shared
 * native config, the connection created, and the application's settings put back, all on the same
 * event-loop thread (quiche copies the config into the connection); then the connection is counted,
 * its {@code AlgorithmAssigned} event written and its channel registered for path stats. Links
 * against no Netty type (quiche's natives through {@link NettyQuiche}), so it runs in every class
 * loader that sees the agent.
 */
final class NettyAlgorithmChoice {

    /** The selection of the connection just created on this thread, for the channel-level advice. */
    private static final ThreadLocal<Selection> LAST = new ThreadLocal<>();

    /** One connection's assignment. */
    static final class Selection {
        final String side;
        final String scidHex;
        final AgentConfig.Arm arm;
        final NettyQuiche quiche;
        /** What runs: reno|cubic|bbr, or "app" (the application's setting). */
        String algorithm = "app";
        /** The id given to quiche, or -1 (the application's). */
        int quicheId = -1;
        String refusal;
        /** The application's settings of the config the connection was created from (null if unknown). */
        NettyConfigs.AppSettings app;
        boolean ccSet;
        boolean cwndSet;
        boolean hystartSet;
        /** Where this quiche keeps a config's settings (null when the selection failed before it was asked). */
        NettyConfigLayout layout;
        /** quiche's algorithm id in the config right before the connection was created from it (-1: unreadable). */
        int createdWith = -1;
        /** Why a forced or canary arm does not run its algorithm (the guard, unknown settings, our error), or null. */
        String notAsAsked;

        Selection(String side, String scidHex, AgentConfig.Arm arm, NettyQuiche quiche) {
            this.side = side;
            this.scidHex = scidHex;
            this.arm = arm;
            this.quiche = quiche;
        }

        String line() {
            return "netty connection side=" + side + " scid=" + scidHex + " arm=" + arm.label() + ":" + arm.algorithm()
                    + " algorithm=" + algorithm + " quiche-id=" + (quicheId < 0 ? "app" : Integer.toString(quicheId))
                    + " quiche=" + quiche.quicheVersion + (refusal != null ? " refused: " + refusal : "")
                    + " ran=" + runningAlgorithm(this) + (createdWith >= 0 ? " (read from the config)" : " (config unreadable)");
        }

        /**
         * The arm's algorithm as status, the arm MXBeans and the counts name it: the arm's own
         * ({@code bbr}) when the connection runs it (or the arm is stock), else what runs and why,
         * e.g. {@code bbr ran cubic (refused: ...)}.
         */
        String armAlgorithm() {
            if (arm.isStock() || notAsAsked == null) {
                return arm.algorithm();
            }
            return arm.algorithm() + " ran " + runningAlgorithm(this) + " (" + notAsAsked + ")";
        }
    }

    /**
     * Test-only fault injection: when the JVM runs with {@code -Dccagent.test.netty-lookup-fails=true},
     * every lookup of Netty's quiche natives by our code fails (as a changed Netty, a module boundary or
     * a broken class loader would make it), so tests can prove that connections are still created by
     * the original native call. Read once; nothing else reads it.
     */
    static final boolean TEST_LOOKUP_FAILS = Boolean.getBoolean("ccagent.test.netty-lookup-fails");

    /**
     * Test-only fault injection, {@code -Dccagent.test.netty-fail=selection|accounting}: the selection
     * fails after the arm is chosen (before anything is set on the config), or the accounting fails
     * right after the connection was created with the arm's algorithm. Read once.
     */
    static final boolean TEST_SELECTION_FAILS = NettyHooks.testFault("selection");
    static final boolean TEST_ACCOUNTING_FAILS = NettyHooks.testFault("accounting");

    /** The natives of the caller's package, or null when our lookup fails (counted, logged once). */
    private static NettyQuiche lookup(Class<?> caller) {
        try {
            return NettyQuiche.of(caller);
        } catch (Throwable t) {
            AgentRuntime.recordFallback("netty quiche lookup", "the connection is created by Netty's own native call"
                    + " with the application's settings and is not counted or recorded", t);
            return null;
        }
    }

    /**
     * The agent could not reach this package's quiche natives: while it is attached and targets Netty, the
     * connection it was to choose for is a fallback (counted, logged once per cause, a Fallback event).
     */
    private static void unreachable(NettyQuiche q) {
        try {
            AgentConfig cfg = AgentRuntime.config();
            if (cfg != null && cfg.targets("netty")) {
                AgentRuntime.recordFallback("netty quiche natives of " + q.packageName, "the connection is created with"
                        + " the application's settings and is not counted or recorded: " + q.broken, null);
            }
        } catch (Throwable ignored) {
            // the connection is created as the application asked either way
        }
    }

    /** {@link NettyHooks#connNew}, with the class that called it. */
    static long connNew(Class<?> caller, long scid, int scidLen, long ocid, int ocidLen, long local, int localLen, long peer,
                               int peerLen, long config, long ssl, boolean server) throws Throwable {
        NettyQuiche q = lookup(caller);
        if (q == null || q.connNew == null) {
            if (q != null) {
                unreachable(q); // the lookup's own failure is counted there
            }
            // fail open: the original native call, reached without our lookup
            return (long) OriginalNatives.invoke(caller, "quiche_conn_new_with_tls", scid, scidLen, ocid, ocidLen,
                    local, localLen, peer, peerLen, config, ssl, server);
        }
        Selection s = before(q, scid, scidLen, config, server ? "server" : "client");
        long conn;
        try {
            conn = (long) q.connNew.invokeExact(scid, scidLen, ocid, ocidLen, local, localLen, peer, peerLen, config,
                    ssl, server);
        } finally {
            after(s, config);
        }
        created(s, conn);
        return conn;
    }

    /** {@link NettyHooks#connNewClientDcid}, with the class that called it. */
    static long connNewClientDcid(Class<?> caller, long scid, int scidLen, long dcid, int dcidLen, long local, int localLen,
                                         long peer, int peerLen, long config, long ssl) throws Throwable {
        NettyQuiche q = lookup(caller);
        if (q == null || q.connNewClientDcid == null) {
            return (long) OriginalNatives.invoke(caller, "quiche_conn_new_with_tls_and_client_dcid", scid, scidLen,
                    dcid, dcidLen, local, localLen, peer, peerLen, config, ssl);
        }
        Selection s = before(q, scid, scidLen, config, "client");
        long conn;
        try {
            conn = (long) q.connNewClientDcid.invokeExact(scid, scidLen, dcid, dcidLen, local, localLen, peer, peerLen,
                    config, ssl);
        } finally {
            after(s, config);
        }
        created(s, conn);
        return conn;
    }

    private static Selection before(NettyQuiche q, long scid, int scidLen, long config, String side) {
        LAST.remove();
        Selection s = null;
        try {
            AgentConfig cfg = AgentRuntime.config();
            if (cfg == null || !cfg.targets("netty")) {
                return null;
            }
            if (q.broken != null) {
                unreachable(q);
                return null;
            }
            NettyConfig n = cfg.netty();
            byte[] id = q.read(scid, scidLen);
            // the guard sends a rolled-back canary arm's share to the default arm (netty.cc)
            AgentConfig.Arm arm = Guard.redirect("netty", cfg,
                    AlgorithmSelector.select(n.canaryArms(), n.defaultArm(), AlgorithmSelector.hash(cfg, id)));
            s = new Selection(side, hex(id), arm, q);
            NettyConfigLayout layout = NettyConfigLayout.of(q);
            s.layout = layout;
            // the constructor's settings, else (a config older than the agent) those read from quiche now
            NettyConfigs.AppSettings app = NettyConfigs.settingsOf(layout, config);
            s.app = app;
            if (!n.changesConnections()) {
                s.createdWith = layout.ccId(config);
                return s;
            }
            if (app == null) {
                s.refusal = "this native config was created before the agent was installed and its settings could not"
                        + " be read from quiche (" + layout.problem + ")";
                s.notAsAsked = "settings of a config older than the agent unreadable";
                AgentLog.warnOnce("netty-unknown-config:" + config, "netty: " + s.refusal
                        + "; its connections keep the application's settings", null);
                AgentRuntime.recordFallback("netty " + (arm.isStock() ? "settings" : "swap to " + arm.algorithm())
                        + " on a config older than the agent", s.refusal + "; the connection keeps the application's"
                        + " settings", null);
                s.createdWith = layout.ccId(config);
                return s;
            }
            if (!arm.isStock()) {
                String refusal = q.refusal(arm.algorithm());
                if (refusal != null) {
                    s.refusal = refusal;
                    // short: it names an arm MXBean and a status count; the WARN line and JFR carry the whole reason
                    s.notAsAsked = "refused on quiche " + q.quicheVersion;
                    AgentLog.warnOnce("netty-refuse:" + q.packageName + ":" + arm.algorithm(), "netty: refusing "
                            + arm.algorithm() + " on " + q.packageName + ": " + refusal
                            + "; those connections keep the application's algorithm (" + app.ccName + ")", null);
                    AgentRuntime.recordFallback("netty swap to " + arm.algorithm() + " on quiche " + q.quicheVersion,
                            "refused: " + refusal + "; the connection keeps the application's algorithm (" + app.ccName
                            + ")", null);
                } else {
                    int ccId = NettyQuiche.idOf(arm.algorithm());
                    if (ccId != app.ccId) {
                        s.ccSet = true; // first: a failing setter is still undone by restore()
                        q.setCc(config, ccId);
                    }
                    if (TEST_SELECTION_FAILS) {
                        // after the setter: the failure path must put the application's algorithm back
                        throw new IllegalStateException("injected selection failure (-Dccagent.test.netty-fail=selection)");
                    }
                    s.algorithm = arm.algorithm();
                    s.quicheId = ccId;
                }
            }
            if (q.allRefusal == null) {
                Integer cwnd = n.initialCwndPackets();
                if (cwnd != null && cwnd != app.cwndPackets) {
                    s.cwndSet = true;
                    q.setCwnd(config, cwnd);
                }
                Boolean hystart = n.hystart();
                if (hystart != null && hystart != app.hystart) {
                    s.hystartSet = true;
                    q.setHystart(config, hystart);
                }
            }
            // what quiche will copy into the connection, read back from the config itself
            s.createdWith = layout.ccId(config);
            if (s.quicheId >= 0 && s.createdWith >= 0 && s.createdWith != s.quicheId) {
                s.notAsAsked = "the config holds " + quicheName(s.createdWith) + " after the agent set "
                        + quicheName(s.quicheId);
                AgentRuntime.recordFallback("netty swap to " + arm.algorithm() + " (read back from the config)",
                        s.notAsAsked + "; the connection runs " + quicheName(s.createdWith), null);
            }
            return s;
        } catch (Throwable t) {
            if (s == null) {
                AgentRuntime.recordFallback("netty algorithm selection", "the connection is created with the"
                        + " application's settings and is not counted or recorded", t);
                return null;
            }
            // put back whatever was already set: the connection is created with the application's settings
            restore(s, config);
            s.ccSet = s.cwndSet = s.hystartSet = false;
            s.algorithm = "app";
            s.quicheId = -1;
            s.refusal = "the agent's selection failed (" + t + ")";
            s.notAsAsked = "agent error";
            s.createdWith = s.layout != null ? s.layout.ccId(config) : -1;
            AgentRuntime.recordFallback("netty algorithm selection", "the connection is created with the"
                    + " application's settings (" + runningAlgorithm(s) + ")", t);
            return s;
        }
    }

    /** Puts the application's settings back on the shared native config (same thread, right after creation). */
    private static void after(Selection s, long config) {
        if (s != null) {
            restore(s, config);
        }
    }

    private static void restore(Selection s, long config) {
        if (!(s.ccSet || s.cwndSet || s.hystartSet)) {
            return;
        }
        try {
            NettyConfigs.AppSettings app = NettyConfigs.CONFIGS.get(config);
            if (s.ccSet) {
                s.quiche.setCc(config, app.ccId);
            }
            if (s.cwndSet) {
                s.quiche.setCwnd(config, app.cwndPackets);
            }
            if (s.hystartSet) {
                s.quiche.setHystart(config, app.hystart);
            }
        } catch (Throwable t) {
            AgentLog.error("netty: could not restore the application's settings on a quiche config", t);
        }
    }

    private static void created(Selection s, long conn) {
        if (s == null || conn == -1) {
            return;
        }
        try {
            if (TEST_ACCOUNTING_FAILS) {
                throw new IllegalStateException("injected accounting failure (-Dccagent.test.netty-fail=accounting)");
            }
            AgentRuntime.countConnection("netty", s.arm.label() + ":" + s.armAlgorithm());
            if (AgentLog.enabled(AgentLog.Level.DEBUG)) {
                AgentLog.debug(s.line());
            }
            LAST.set(s);
            if (dev.ccagent.jfr.JfrSwitch.on) {
                assigned(s);
            }
        } catch (Throwable t) {
            AgentRuntime.recordFallback("netty connection accounting", "the connection runs " + runningAlgorithm(s)
                    + " (arm " + s.arm.label() + ":" + s.armAlgorithm() + ") but is not counted, logged, recorded in JFR"
                    + " or measured", t);
        }
    }

    /** quiche's own name of an algorithm id (as in {@code quiche_config_set_cc_algorithm_name}). */
    static String quicheName(int id) {
        switch (id) {
            case NettyQuiche.RENO:
                return "reno";
            case NettyQuiche.CUBIC:
                return "cubic";
            case NettyQuiche.BBR:
                return "bbr2_gcongestion";
            default:
                return "id " + id;
        }
    }

    /**
     * The quiche algorithm the connection runs: read back from the config it was created from where
     * quiche's layout is known, else ours, or the application's.
     */
    static String runningAlgorithm(Selection s) {
        if (s.createdWith >= 0) {
            return quicheName(s.createdWith);
        }
        if (s.quicheId >= 0) {
            return quicheName(s.quicheId);
        }
        NettyConfigs.AppSettings app = s.app;
        if (app == null) {
            return "the application's algorithm";
        }
        return "default".equals(app.ccName) ? "cubic" : app.ccName.toLowerCase(java.util.Locale.ROOT).equals("bbr")
                ? "bbr2_gcongestion" : app.ccName.toLowerCase(java.util.Locale.ROOT);
    }

    /** The AlgorithmAssigned event of a new connection (only while a recording runs). */
    private static void assigned(Selection s) {
        AgentConfig cfg = AgentRuntime.config();
        NettyConfig n = cfg != null ? cfg.netty() : NettyConfig.DEFAULT;
        NettyConfigs.AppSettings app = s.app;
        StringBuilder o = new StringBuilder();
        int cwnd = s.cwndSet ? n.initialCwndPackets() : app != null ? app.cwndPackets : -1;
        if (cwnd >= 0) {
            o.append("initial-cwnd=").append(cwnd).append(',');
        }
        Boolean hystart = s.hystartSet ? n.hystart() : app != null ? Boolean.valueOf(app.hystart) : null;
        if (hystart != null) {
            o.append("hystart=").append(hystart ? "on" : "off").append(',');
        }
        o.append("pacing=").append(n.pacing() ? "ccagent" : "none");
        String reason;
        if (s.refusal != null) {
            // nothing was overridden: the connection runs what the application configured
            reason = "application's setting (refused: " + s.refusal + ")";
        } else if (s.notAsAsked != null) {
            reason = "not as asked: " + s.notAsAsked;
        } else if (s.arm.isStock()) {
            reason = "application's setting";
        } else if ("canary".equals(s.arm.label())) {
            reason = "canary split (" + s.arm.percent() + "% of new connections)";
        } else {
            reason = "forced";
        }
        dev.ccagent.agent.jfr.CcJfr.algorithmAssigned("netty", s.scidHex, s.side, runningAlgorithm(s), o.toString(),
                s.arm.label(), reason);
    }

    /** After {@code handleServer} returns (a new or existing channel, or null) and after {@code connectNow}. */
    static void onChannel(Object channel) {
        Selection s = LAST.get();
        if (s == null) {
            return;
        }
        LAST.remove();
        if (!NettyLinkage.linked(channel)) {
            return; // no channel, or Netty in a loader whose classes the agent's helpers cannot link against
        }
        try {
            NettyConnections.register(channel, s);
        } catch (Throwable t) {
            AgentRuntime.recordFallback("netty path stats", "the connection runs " + runningAlgorithm(s)
                    + " as created; its path stats are not sampled and it is not measured in its arm", t);
        }
    }

    static String hex(byte[] id) {
        StringBuilder sb = new StringBuilder(id.length * 2);
        for (byte b : id) {
            sb.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
        }
        return sb.toString();
    }

    private NettyAlgorithmChoice() {
    }
}
