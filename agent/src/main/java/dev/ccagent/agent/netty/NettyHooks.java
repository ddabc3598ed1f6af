package dev.ccagent.agent.netty;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.config.NettyConfig;
import dev.ccagent.agent.detect.SendTelemetry;
import dev.ccagent.agent.log.AgentLog;
import dev.ccagent.agent.measure.Guard;
import dev.ccagent.agent.runtime.AgentRuntime;
import dev.ccagent.agent.select.AlgorithmSelector;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The static entry points Netty QUIC's instrumented code calls (advice is inlined into Netty's
 * classes, so these are public). Everything but the native call itself catches everything: on any
 * problem the connection gets the application's own settings.
 *
 * <p>No Netty type appears in a signature here: the same hooks serve {@code io.netty.handler.codec.quic}
 * and {@code io.netty.incubator.codec.quic}; package-specific natives are reached through
 * {@link NettyQuiche}, resolved from the calling class.
 */
public final class NettyHooks {

    private static final StackWalker WALKER = StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE);

    /**
     * The application's settings of each native quiche config, by its address (from QuicheConfig's
     * constructor; removed by {@code QuicheConfig.free()}). At most {@link #MAX_CONFIGS}: beyond that a
     * new config is not remembered and its connections keep the application's settings (logged once).
     */
    static final Map<Long, AppSettings> CONFIGS = new ConcurrentHashMap<>();
    static final int MAX_CONFIGS = 4096;

    /** A send time this far (or more) after now is not believed: the datagram is treated as due now. */
    static final long MAX_LEAD_NANOS = 100_000_000L;
    /** A send time this far (or more) before now is not believed either (stale or garbage). */
    static final long MAX_LAG_NANOS = 1_000_000_000L;

    /** The selection of the connection just created on this thread, for the channel-level advice. */
    private static final ThreadLocal<Selection> LAST = new ThreadLocal<>();

    /** Per event-loop thread: the send_info buffer quiche fills for the next datagram. */
    private static final ThreadLocal<SendSlot> SLOT = ThreadLocal.withInitial(SendSlot::new);
    private static final List<SendSlot> SLOTS = new CopyOnWriteArrayList<>();

    /** A datagram is "paced ahead" when quiche's send time is this far in the future. */
    static final long AHEAD_NANOS = 50_000L;

    private NettyHooks() {
    }

    /** What the application configured on one native config (quiche defaults where it left a value null). */
    static final class AppSettings {
        final int ccId;
        final String ccName;
        final boolean hystart;
        final int cwndPackets;

        AppSettings(int ccId, String ccName, boolean hystart, int cwndPackets) {
            this.ccId = ccId;
            this.ccName = ccName;
            this.hystart = hystart;
            this.cwndPackets = cwndPackets;
        }
    }

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
        AppSettings app;
        boolean ccSet;
        boolean cwndSet;
        boolean hystartSet;

        Selection(String side, String scidHex, AgentConfig.Arm arm, NettyQuiche quiche) {
            this.side = side;
            this.scidHex = scidHex;
            this.arm = arm;
            this.quiche = quiche;
        }

        String line() {
            return "netty connection side=" + side + " scid=" + scidHex + " arm=" + arm.label() + ":" + arm.algorithm()
                    + " algorithm=" + algorithm + " quiche-id=" + (quicheId < 0 ? "app" : Integer.toString(quicheId))
                    + " quiche=" + quiche.quicheVersion + (refusal != null ? " refused: " + refusal : "");
        }
    }

    // ---------------------------------------------------------------- QuicheConfig constructor

    /** After {@code QuicheConfig}'s constructor: remembers the application's settings of that native config. */
    public static void onConfig(Class<?> configClass, long address, Boolean hystart, Object cc, Integer cwnd) {
        try {
            NettyQuiche q = NettyQuiche.of(configClass);
            String name = cc == null ? "default" : ((Enum<?>) cc).name();
            int id = cc == null ? NettyQuiche.CUBIC : q.nettyIdOf(name);
            if (CONFIGS.size() >= MAX_CONFIGS && !CONFIGS.containsKey(address)) {
                AgentLog.warnOnce("netty-configs-full", "netty: more than " + MAX_CONFIGS + " live quiche configs;"
                        + " connections of further configs keep the application's settings", null);
                return;
            }
            CONFIGS.put(address, new AppSettings(id, name, hystart == null || hystart, cwnd == null ? 10 : cwnd));
            if (cc != null && "BBR".equals(name) && q.bbrRefusal != null) {
                AgentLog.warnOnce("netty-app-bbr:" + q.packageName,
                        "netty: the application selects BBR, which Netty passes to quiche " + q.quicheVersion
                                + " as id " + id + ": " + q.bbrRefusal + "; connections that keep the application's"
                                + " algorithm will hit that", null);
            }
        } catch (Throwable t) {
            AgentRuntime.recordFallback("netty config capture", t);
        }
    }

    /** At the start of {@code QuicheConfig.free()}: the native config goes away, and so does what we kept of it. */
    public static void onConfigFreed(long address) {
        try {
            if (address != -1 && address != 0) {
                CONFIGS.remove(address);
            }
        } catch (Throwable t) {
            AgentRuntime.recordFallback("netty config release", t);
        }
    }

    // ---------------------------------------------------------------- connection creation

    /**
     * Test-only fault injection: when the JVM runs with {@code -Dccagent.test.netty-lookup-fails=true},
     * every lookup of Netty's quiche natives by our code fails (as a changed Netty, a module boundary or
     * a broken class loader would make it), so tests can prove that connections are still created by
     * the original native call. Read once; nothing else reads it.
     */
    static final boolean TEST_LOOKUP_FAILS = Boolean.getBoolean("ccagent.test.netty-lookup-fails");

    /** The natives of the caller's package, or null when our lookup fails (counted, logged once). */
    private static NettyQuiche lookup(Class<?> caller) {
        try {
            return NettyQuiche.of(caller);
        } catch (Throwable t) {
            AgentRuntime.recordFallback("netty quiche lookup", t);
            return null;
        }
    }

    /** Replaces {@code Quiche.quiche_conn_new_with_tls} in QuicheQuicServerCodec and QuicheQuicChannel. */
    public static long connNew(long scid, int scidLen, long ocid, int ocidLen, long local, int localLen, long peer,
                               int peerLen, long config, long ssl, boolean server) throws Throwable {
        Class<?> caller = WALKER.getCallerClass();
        NettyQuiche q = lookup(caller);
        if (q == null || q.connNew == null) {
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

    /** Replaces {@code Quiche.quiche_conn_new_with_tls_and_client_dcid} (Netty 4.2.11+, clients). */
    public static long connNewClientDcid(long scid, int scidLen, long dcid, int dcidLen, long local, int localLen,
                                         long peer, int peerLen, long config, long ssl) throws Throwable {
        Class<?> caller = WALKER.getCallerClass();
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
        try {
            AgentConfig cfg = AgentRuntime.config();
            if (cfg == null || !cfg.targets("netty") || q.broken != null) {
                return null;
            }
            NettyConfig n = cfg.netty();
            byte[] id = q.read(scid, scidLen);
            // the guard sends a rolled-back canary arm's share to the default arm (netty.cc)
            AgentConfig.Arm arm = Guard.redirect("netty", cfg,
                    AlgorithmSelector.select(n.canaryArms(), n.defaultArm(), AlgorithmSelector.hash(cfg, id)));
            Selection s = new Selection(side, hex(id), arm, q);
            if (!n.changesConnections()) {
                s.app = CONFIGS.get(config);
                return s;
            }
            AppSettings app = CONFIGS.get(config);
            s.app = app;
            if (app == null) {
                s.refusal = "this native config was created before the agent was installed (its settings are unknown)";
                AgentLog.warnOnce("netty-unknown-config:" + config, "netty: " + s.refusal
                        + "; its connections keep the application's settings", null);
                return s;
            }
            if (!arm.isStock()) {
                String refusal = q.refusal(arm.algorithm());
                if (refusal != null) {
                    s.refusal = refusal;
                    AgentLog.warnOnce("netty-refuse:" + q.packageName + ":" + arm.algorithm(), "netty: refusing "
                            + arm.algorithm() + " on " + q.packageName + ": " + refusal
                            + "; those connections keep the application's algorithm (" + app.ccName + ")", null);
                } else {
                    int ccId = NettyQuiche.idOf(arm.algorithm());
                    if (ccId != app.ccId) {
                        q.setCc(config, ccId);
                        s.ccSet = true;
                    }
                    s.algorithm = arm.algorithm();
                    s.quicheId = ccId;
                }
            }
            if (q.allRefusal == null) {
                Integer cwnd = n.initialCwndPackets();
                if (cwnd != null && cwnd != app.cwndPackets) {
                    q.setCwnd(config, cwnd);
                    s.cwndSet = true;
                }
                Boolean hystart = n.hystart();
                if (hystart != null && hystart != app.hystart) {
                    q.setHystart(config, hystart);
                    s.hystartSet = true;
                }
            }
            return s;
        } catch (Throwable t) {
            AgentRuntime.recordFallback("netty algorithm selection", t);
            return null;
        }
    }

    /** Puts the application's settings back on the shared native config (same thread, right after creation). */
    private static void after(Selection s, long config) {
        if (s == null || !(s.ccSet || s.cwndSet || s.hystartSet)) {
            return;
        }
        try {
            AppSettings app = CONFIGS.get(config);
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
            AgentRuntime.countConnection("netty", s.arm);
            if (AgentLog.enabled(AgentLog.Level.DEBUG)) {
                AgentLog.debug(s.line());
            }
            LAST.set(s);
            if (dev.ccagent.jfr.JfrSwitch.on) {
                assigned(s);
            }
        } catch (Throwable t) {
            AgentRuntime.recordFallback("netty connection accounting", t);
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

    /** The quiche algorithm the connection runs: ours, or the application's. */
    static String runningAlgorithm(Selection s) {
        if (s.quicheId >= 0) {
            return quicheName(s.quicheId);
        }
        AppSettings app = s.app;
        if (app == null) {
            return "unknown (application's)";
        }
        return "default".equals(app.ccName) ? "cubic" : app.ccName.toLowerCase(java.util.Locale.ROOT).equals("bbr")
                ? "bbr2_gcongestion" : app.ccName.toLowerCase(java.util.Locale.ROOT);
    }

    /** The AlgorithmAssigned event of a new connection (only while a recording runs). */
    private static void assigned(Selection s) {
        AgentConfig cfg = AgentRuntime.config();
        NettyConfig n = cfg != null ? cfg.netty() : NettyConfig.DEFAULT;
        AppSettings app = s.app;
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
    public static void onChannel(Object channel) {
        Selection s = LAST.get();
        if (s == null) {
            return;
        }
        LAST.remove();
        if (channel == null) {
            return;
        }
        try {
            NettyConnections.register(channel, s);
        } catch (Throwable t) {
            AgentRuntime.recordFallback("netty path stats", t);
        }
    }

    // ---------------------------------------------------------------- pacing

    /** After {@code QuicheQuicCodec.handlerAdded(ctx)}: puts the pacer between the socket and the codec. */
    public static void onCodecAdded(Object ctx) {
        try {
            AgentConfig cfg = AgentRuntime.config();
            if (cfg != null && cfg.targets("netty") && cfg.netty().pacing()) {
                NettyPacer.install(ctx, cfg.netty().maxBurstBytes());
            }
        } catch (Throwable t) {
            AgentRuntime.recordFallback("netty pacer installation", t);
        }
    }

    /** After {@code QuicheQuicConnection.nextSendInfo()}: quiche fills this buffer for the datagram it writes next. */
    public static void onSendInfo(ByteBuffer sendInfo) {
        try {
            AgentConfig cfg = AgentRuntime.config();
            if (cfg == null || !(cfg.netty().pacing() || cfg.netty().statsPeriodNanos() > 0)) {
                return;
            }
            SendSlot s = SLOT.get();
            if (s.pending != null) {
                s.observe(System.nanoTime()); // no datagram took the previous one
            }
            s.pending = sendInfo;
        } catch (Throwable t) {
            AgentRuntime.recordFallback("netty send time", t);
        }
    }

    /**
     * Before {@code QuicheQuicChannel.writePacket}: true when the datagram about to be written will be
     * held by the pacer beyond its early horizon. Netty then treats the send window as used and resumes
     * its send loop when that write completes, so quiche produces the next datagram near its own
     * release time instead of queueing a whole window in the pacer (which would inflate every RTT
     * sample by the time spent in the queue).
     */
    public static boolean holdSendLoop(Object channel) {
        try {
            AgentConfig cfg = AgentRuntime.config();
            if (cfg == null || !cfg.netty().pacing()) {
                return false;
            }
            SendSlot s = SLOT.get();
            s.holder = null;
            ByteBuffer b = s.pending;
            if (b == null) {
                return false;
            }
            long sec = b.getLong(272);
            long nsec = b.getLong(280);
            if (b.order() != ByteOrder.nativeOrder()) {
                sec = Long.reverseBytes(sec);
                nsec = Long.reverseBytes(nsec);
            }
            long now = System.nanoTime();
            long at = believable(sec * 1_000_000_000L + nsec, now);
            boolean hold = at != 0 && at - now > NettyPacer.EARLY_NANOS;
            // the pacer counts this datagram as the channel's held one; a stale holder (no pacer took
            // it) never outlives the next datagram of quiche's send loop
            if (hold) {
                s.holder = channel;
            }
            return hold;
        } catch (Throwable t) {
            AgentRuntime.recordFallback("netty send-loop hold", t);
            return false;
        }
    }

    /**
     * Before {@code QuicheQuicChannel.connectionSend}: true (skip it, answering "nothing sent") while
     * one of this channel's datagrams is held by the pacer with Netty's continue-sending listener on
     * its write. That write's completion calls {@code connectionSend} again, so nothing is lost; in the
     * meantime quiche is not asked for datagrams it would stamp as sent long before they leave (which
     * inflated its RTT samples and BBR's view of in-flight data). Never skips a closing channel.
     */
    public static boolean skipSend(Object channel) {
        try {
            AgentConfig cfg = AgentRuntime.config();
            if (cfg == null || !cfg.netty().pacing()) {
                return false;
            }
            io.netty.channel.Channel ch = (io.netty.channel.Channel) channel;
            if (!ch.isOpen()) {
                return false;
            }
            int[] held = NettyPacer.heldOf(ch, false);
            if (held != null && held[0] > 0) {
                SLOT.get().skippedSends++;
                return true;
            }
            return false;
        } catch (Throwable t) {
            AgentRuntime.recordFallback("netty send skip", t);
            return false;
        }
    }

    // ---------------------------------------------------------------- send-loop telemetry
    // One attribute lookup and a few plain long increments per call on the event loop; no allocation.

    /** Start of {@code connectionSend} that runs: the datagram count to compare at its end, or -1. */
    public static long sendEnter(Object channel) {
        try {
            SendTelemetry t = NettyConnections.telemetryOf(channel);
            return t != null ? t.loopEnter() : -1;
        } catch (Throwable t) {
            return -1;
        }
    }

    /**
     * quiche's send time {@code at} as the pacer may use it: 0 ("now") when outside
     * [now − {@link #MAX_LAG_NANOS}, now + {@link #MAX_LEAD_NANOS}] (garbage, a clock quiche does not
     * share with us, or a buffer read after it was released).
     */
    static long believable(long at, long now) {
        long lead = at - now;
        return at == 0 || lead >= MAX_LEAD_NANOS || lead <= -MAX_LAG_NANOS ? 0 : at;
    }

    /** End of a {@code connectionSend} that ran (also when it threw). */
    public static void sendExit(Object channel, long datagramsBefore) {
        endSendLoop();
        if (datagramsBefore < 0) {
            return;
        }
        try {
            SendTelemetry t = NettyConnections.telemetryOf(channel);
            if (t != null) {
                t.loopExit(datagramsBefore);
            }
        } catch (Throwable ignored) {
            // counters only
        }
    }

    /** {@code writePacket}: a datagram from quiche's send loop goes to the UDP channel. */
    public static void datagramWritten(Object channel) {
        try {
            SendTelemetry t = NettyConnections.telemetryOf(channel);
            if (t != null) {
                t.datagramSent();
            }
        } catch (Throwable ignored) {
            // counters only
        }
    }

    /**
     * {@code recv}: a datagram for this connection. Counted without the receiver-thread id: Netty
     * receives on the same event-loop thread it sends on, whose allocation the sender path reports.
     */
    public static void datagramReceived(Object channel) {
        try {
            SendTelemetry t = NettyConnections.telemetryOf(channel);
            if (t != null) {
                t.packetsReceived++;
            }
        } catch (Throwable ignored) {
            // counters only
        }
    }

    /** The {@code SendResult.NONE} constant of the calling package (what a skipped connectionSend answers). */
    public static Object sendResultNone(Class<?> channelClass) {
        try {
            return NettyQuiche.of(channelClass).sendResultNone();
        } catch (Throwable t) {
            return null; // Netty's callers only compare it with NONE/SOME
        }
    }

    /**
     * quiche's send loop on this thread ended (quiche answered DONE, or the loop threw): its last
     * send_info is no one's any more. A later write on this thread that is not from a send loop
     * (Retry, version negotiation, stateless reset) must not take its send time, nor read a buffer
     * {@code QuicheQuicConnection.free()} may already have released.
     */
    static void endSendLoop() {
        try {
            SendSlot s = SLOT.get();
            if (s.pending != null) {
                s.pending = null;
                s.cleared++;
            }
            s.holder = null;
        } catch (Throwable ignored) {
            // nothing held
        }
    }

    /** The channel whose send loop the datagram being written on this thread stopped (null if none). */
    static Object takeHolder() {
        SendSlot s = SLOT.get();
        Object h = s.holder;
        s.holder = null;
        return h;
    }

    /**
     * quiche's send time ({@code CLOCK_MONOTONIC}, comparable with {@link System#nanoTime()}) of the
     * datagram being written on this thread, or 0 when the write did not come from quiche's send loop.
     */
    static long takeSendTime(long now) {
        SendSlot s = SLOT.get();
        if (s.pending == null) {
            return 0;
        }
        return s.observe(now);
    }

    /** Counts of event-loop threads that ended (their slots are pruned): skipped, seen, ahead, max lead, unbelievable. */
    private static final long[] RETIRED = new long[5];

    /**
     * {datagrams seen, datagrams whose send time was ≥ 50 µs ahead, largest lead ns, skipped sends,
     * send times not believed}, over all threads (slots of threads that ended are folded in and dropped).
     */
    public static long[] sendTimeStats() {
        long[] out = new long[5];
        synchronized (RETIRED) {
            pruneSlots();
            out[0] = RETIRED[1];
            out[1] = RETIRED[2];
            out[2] = RETIRED[3];
            out[3] = RETIRED[0];
            out[4] = RETIRED[4];
        }
        for (SendSlot s : SLOTS) {
            out[3] += s.skippedSends;
            out[0] += s.seen;
            out[1] += s.ahead;
            out[2] = Math.max(out[2], s.maxLead);
            out[4] += s.unbelievable;
        }
        return out;
    }

    /** Drops the slots of threads that ended (caller holds RETIRED), keeping their counts. */
    private static void pruneSlots() {
        for (SendSlot s : SLOTS) {
            Thread t = s.thread.get();
            if (t == null || !t.isAlive()) {
                RETIRED[0] += s.skippedSends;
                RETIRED[1] += s.seen;
                RETIRED[2] += s.ahead;
                RETIRED[3] = Math.max(RETIRED[3], s.maxLead);
                RETIRED[4] += s.unbelievable;
                SLOTS.remove(s);
            }
        }
    }

    /** Live per-thread slots (tests: the list must not grow with threads that ended). */
    static int slotCount() {
        synchronized (RETIRED) {
            pruneSlots();
        }
        return SLOTS.size();
    }

    static final class SendSlot {
        ByteBuffer pending;
        /** The channel whose send loop stopped on the datagram being written (see {@link #holdSendLoop}). */
        Object holder;
        long skippedSends;
        long seen;
        long ahead;
        long maxLead;
        /** Send times outside the believable window (treated as "now"). */
        long unbelievable;
        /** send_infos a send loop left unclaimed at its end. */
        long cleared;
        final java.lang.ref.WeakReference<Thread> thread = new java.lang.ref.WeakReference<>(Thread.currentThread());

        SendSlot() {
            synchronized (RETIRED) {
                pruneSlots();
            }
            SLOTS.add(this);
        }

        long observe(long now) {
            ByteBuffer b = pending;
            pending = null;
            long sec = b.getLong(272);
            long nsec = b.getLong(280);
            if (b.order() != ByteOrder.nativeOrder()) {
                sec = Long.reverseBytes(sec);
                nsec = Long.reverseBytes(nsec);
            }
            long raw = sec * 1_000_000_000L + nsec;
            long at = believable(raw, now);
            if (at == 0 && raw != 0) {
                unbelievable++;
            }
            seen++;
            long lead = at == 0 ? 0 : at - now;
            if (lead >= AHEAD_NANOS) {
                ahead++;
                if (lead > maxLead) {
                    maxLead = lead;
                }
            }
            return at == 0 ? 0 : at;
        }
    }

    static String hex(byte[] id) {
        StringBuilder sb = new StringBuilder(id.length * 2);
        for (byte b : id) {
            sb.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
        }
        return sb.toString();
    }
}
