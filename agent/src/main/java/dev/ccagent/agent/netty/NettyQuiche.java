package dev.ccagent.agent.netty;

import dev.ccagent.agent.log.AgentLog;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.Locale;

/**
 * What the agent needs of one Netty QUIC package ({@code io.netty.handler.codec.quic} or the
 * incubator's) in one class loader: handles on the package-private {@code Quiche} natives, the
 * bundled quiche version and which algorithm ids that quiche can run (the guard).
 *
 * <p>quiche's algorithm ids are 0 reno, 1 cubic, 4 bbr ({@code bbr2_gcongestion}); Netty's own
 * {@code QUICHE_CC_BBR} constant is never passed to quiche. Resolved once per {@code Quiche} class
 * ({@link ClassValue}), so two class loaders with Netty each get their own natives.
 */
final class NettyQuiche {

    static final int RENO = 0;
    static final int CUBIC = 1;
    static final int BBR = 4;

    private static final ClassValue<NettyQuiche> BY_QUICHE_CLASS = new ClassValue<>() {
        @Override
        protected NettyQuiche computeValue(Class<?> quiche) {
            return new NettyQuiche(quiche);
        }
    };

    final String packageName;
    final ClassLoader loader;
    /** quiche_conn_new_with_tls (JIJIJIJIJJZ)J. */
    final MethodHandle connNew;
    /** quiche_conn_new_with_tls_and_client_dcid (JIJIJIJIJJ)J, null before Netty 4.2.11 (absent in 4.2.10). */
    final MethodHandle connNewClientDcid;
    private final MethodHandle setCc;
    private final MethodHandle setCwnd;
    private final MethodHandle setHystart;
    /** Netty's constants as its bundled quiche reports them (restoring the application's choice). */
    final int nettyReno;
    final int nettyCubic;
    final int nettyBbr;
    final String quicheVersion;
    /** Null when the bundled quiche runs reno, cubic and bbr; else why bbr is refused. */
    final String bbrRefusal;
    /** Null when reno and cubic run; else why every algorithm is refused. */
    final String allRefusal;
    /** A problem resolving the natives: nothing is changed for this package. */
    final String broken;
    private final MethodHandle readByte;
    /** QuicheQuicChannel.connectionSendAndFlush(), null when this Netty has none ({@link #sendNowProblem}). */
    private final MethodHandle sendAndFlush;
    private final String sendNowProblem;
    /** Null when quiche_send_info.at sits where the pacer reads it (offsets 272/280, 64-bit time_t). */
    String sendTimeProblem;
    /** Where this quiche keeps a config's settings, found at first use ({@link NettyConfigLayout#of}). */
    volatile NettyConfigLayout configLayout;

    private NettyQuiche(Class<?> quiche) {
        this.packageName = quiche.getPackageName();
        this.loader = quiche.getClassLoader();
        MethodHandle cn = null, cnd = null, cc = null, cw = null, hs = null, rb = null;
        int r = -1, c = -1, b = -1;
        String version = "unknown";
        String problem = null;
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            cn = lookup.unreflect(declared(quiche, "quiche_conn_new_with_tls", long.class, int.class, long.class,
                    int.class, long.class, int.class, long.class, int.class, long.class, long.class, boolean.class));
            try {
                cnd = lookup.unreflect(declared(quiche, "quiche_conn_new_with_tls_and_client_dcid", long.class,
                        int.class, long.class, int.class, long.class, int.class, long.class, int.class, long.class,
                        long.class));
            } catch (NoSuchMethodException absent) {
                cnd = null; // Netty before 4.2.11
            }
            cc = lookup.unreflect(declared(quiche, "quiche_config_set_cc_algorithm", long.class, int.class));
            cw = lookup.unreflect(declared(quiche, "quiche_config_set_initial_congestion_window_packets",
                    long.class, int.class));
            hs = lookup.unreflect(declared(quiche, "quiche_config_enable_hystart", long.class, boolean.class));
            int at = staticInt(quiche, "QUICHE_SEND_INFO_OFFSETOF_AT");
            int sec = staticInt(quiche, "TIMESPEC_OFFSETOF_TV_SEC");
            int nsec = staticInt(quiche, "TIMESPEC_OFFSETOF_TV_NSEC");
            int timeT = staticInt(quiche, "SIZEOF_TIME_T");
            if (at + sec != 272 || at + nsec != 280 || timeT != 8) {
                sendTimeProblem = "quiche_send_info.at is at " + (at + sec) + "/" + (at + nsec) + " (time_t " + timeT
                        + " bytes), not 272/280 (8)";
            }
            r = staticInt(quiche, "QUICHE_CC_RENO");
            c = staticInt(quiche, "QUICHE_CC_CUBIC");
            b = staticInt(quiche, "QUICHE_CC_BBR");
            version = String.valueOf(declared(quiche, "quiche_version").invoke(null));
            Class<?> pd = Class.forName("io.netty.util.internal.PlatformDependent", false, loader);
            rb = lookup.findStatic(pd, "getByte", MethodType.methodType(byte.class, long.class));
        } catch (Throwable t) {
            problem = t.toString();
        }
        this.connNew = cn;
        this.connNewClientDcid = cnd;
        this.setCc = cc;
        this.setCwnd = cw;
        this.setHystart = hs;
        this.readByte = rb;
        MethodHandle saf = null;
        String sendProblem = null;
        try {
            Class<?> channel = Class.forName(packageName + ".QuicheQuicChannel", false, loader);
            saf = MethodHandles.lookup().unreflect(declared(channel, "connectionSendAndFlush"));
        } catch (Throwable t) {
            sendProblem = t.toString();
        }
        this.sendAndFlush = saf;
        this.sendNowProblem = sendProblem;
        this.nettyReno = r;
        this.nettyCubic = c;
        this.nettyBbr = b;
        this.quicheVersion = version;
        this.broken = problem;
        int[] v = parse(version);
        String all = null;
        String bbr = null;
        if (problem != null) {
            all = "the agent could not reach Netty's quiche natives (" + problem + ")";
        } else if (v == null) {
            all = "quiche version '" + version + "' is not one the agent knows";
        } else if (r != RENO || c != CUBIC) {
            all = "quiche " + version + " reports reno/cubic ids " + r + "/" + c + ", not 0/1";
        }
        if (all != null) {
            bbr = all;
        } else if (b != BBR) {
            // quiche 0.24.x (Netty 4.2.10): the C header says BBR=2, the Rust enum has no 2, and quiche
            // panics (aborting the JVM) at the first connection: cloudflare/quiche#2342
            bbr = "quiche " + version + " reports QUICHE_CC_BBR=" + b + " where quiche's bbr2_gcongestion is 4: its C "
                    + "header and its algorithm enum disagree (id " + b + " makes quiche panic, cloudflare/quiche#2342)";
        } else if (compare(v, new int[] {0, 25, 0}) < 0) {
            bbr = "quiche " + version + " is older than 0.25.0, the first with id 4 = bbr2_gcongestion in its C API";
        }
        this.allRefusal = all;
        this.bbrRefusal = bbr;
        logState();
    }

    /** The state for the {@code Quiche} class of {@code nettyClass}'s package and loader. */
    static NettyQuiche of(Class<?> nettyClass) throws ClassNotFoundException {
        if (NettyAlgorithmChoice.TEST_LOOKUP_FAILS) {
            throw new IllegalStateException("injected lookup failure (-Dccagent.test.netty-lookup-fails=true)");
        }
        Class<?> quiche = Class.forName(nettyClass.getPackageName() + ".Quiche", false, nettyClass.getClassLoader());
        return BY_QUICHE_CLASS.get(quiche);
    }

    /** quiche's id for one of {@link dev.ccagent.agent.config.NettyConfig#ALGORITHMS}, or -1. */
    static int idOf(String algorithm) {
        switch (algorithm) {
            case "reno":
                return RENO;
            case "cubic":
                return CUBIC;
            case "bbr":
                return BBR;
            default:
                return -1;
        }
    }

    /** Null when this quiche runs {@code algorithm}; else the reason it is refused. */
    String refusal(String algorithm) {
        if (allRefusal != null) {
            return allRefusal;
        }
        return "bbr".equals(algorithm) ? bbrRefusal : null;
    }

    /** The id Netty itself passes for the application's enum name (RENO, CUBIC, BBR), -1 if unknown. */
    int nettyIdOf(String enumName) {
        switch (enumName.toUpperCase(Locale.ROOT)) {
            case "RENO":
                return nettyReno;
            case "CUBIC":
                return nettyCubic;
            case "BBR":
                return nettyBbr;
            default:
                return -1;
        }
    }

    private volatile Object sendResultNone;

    /** {@code QuicheQuicChannel.SendResult.NONE} of this package. */
    Object sendResultNone() throws ClassNotFoundException {
        Object none = sendResultNone;
        if (none == null) {
            Class<?> type = Class.forName(packageName + ".QuicheQuicChannel$SendResult", false, loader);
            for (Object c : type.getEnumConstants()) {
                if ("NONE".equals(((Enum<?>) c).name())) {
                    none = c;
                }
            }
            sendResultNone = none;
        }
        return none;
    }

    void setCc(long config, int id) throws Throwable {
        setCc.invokeExact(config, id);
    }

    void setCwnd(long config, int packets) throws Throwable {
        setCwnd.invokeExact(config, packets);
    }

    void setHystart(long config, boolean on) throws Throwable {
        setHystart.invokeExact(config, on);
    }

    /** Runs {@code channel}'s send loop now (a QuicheQuicChannel of this package; on its event loop). */
    void sendNow(Object channel) throws Throwable {
        if (sendAndFlush == null) {
            throw new IllegalStateException("no QuicheQuicChannel.connectionSendAndFlush() in " + packageName + ": "
                    + sendNowProblem);
        }
        sendAndFlush.invoke(channel);
    }

    /** Copies native memory (a connection id) into a new array. */
    byte[] read(long address, int length) throws Throwable {
        byte[] out = new byte[Math.max(0, length)];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) readByte.invokeExact(address + i);
        }
        return out;
    }

    private static Method declared(Class<?> type, String name, Class<?>... params) throws NoSuchMethodException {
        Method m = type.getDeclaredMethod(name, params);
        m.setAccessible(true);
        return m;
    }

    private static int staticInt(Class<?> type, String name) throws ReflectiveOperationException {
        Field f = type.getDeclaredField(name);
        f.setAccessible(true);
        return f.getInt(null);
    }

    /** "0.25.0" → {0, 25, 0}; null when not three numbers. */
    static int[] parse(String version) {
        if (version == null) {
            return null;
        }
        String[] parts = version.strip().split("[.\\-+]");
        if (parts.length < 3) {
            return null;
        }
        int[] out = new int[3];
        try {
            for (int i = 0; i < 3; i++) {
                out[i] = Integer.parseInt(parts[i]);
            }
        } catch (NumberFormatException e) {
            return null;
        }
        return out;
    }

    static int compare(int[] a, int[] b) {
        for (int i = 0; i < 3; i++) {
            if (a[i] != b[i]) {
                return Integer.compare(a[i], b[i]);
            }
        }
        return 0;
    }

    void logState() {
        AgentLog.info("netty: " + packageName + " bundles quiche " + quicheVersion + " (Netty's ids reno/cubic/bbr = "
                + nettyReno + "/" + nettyCubic + "/" + nettyBbr + "); "
                + (allRefusal != null ? "refusing every algorithm: " + allRefusal
                : bbrRefusal != null ? "reno and cubic available, bbr refused: " + bbrRefusal
                : "reno (0), cubic (1) and bbr (4, bbr2_gcongestion) available"));
    }
}
