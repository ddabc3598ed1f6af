package dev.ccagent.agent.netty;

import dev.ccagent.agent.log.AgentLog;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Where the bundled quiche keeps a config's congestion algorithm, HyStart switch and initial window,
 * found once per {@code Quiche} class on a scratch config of its own ({@code quiche_config_new}): each
 * setter is called with a known sequence of values and the config's bytes are read after each call;
 * the one offset that followed the sequence is the field ({@link FieldOffsetFinder}). quiche has no
 * getters; this is how the agent reads the application's settings from a live config whose
 * constructor ran before the agent was there (late attach), and what a connection was created with.
 *
 * <p>The scratch config is read through {@code /proc/self/mem}, which answers an error instead of
 * faulting where memory is not mapped; a live config is then read only at the offsets found, which lie
 * inside the struct (quiche's own setter wrote there), with Netty's {@code PlatformDependent.getByte}.
 * Where anything is not as expected (no /proc, a field not found or found twice, a value quiche's enum
 * does not have) the layout says why, and nothing is read.
 */
final class NettyConfigLayout {

    /** Bytes of the scratch config read per snapshot (quiche's Config is well under 2 KiB). */
    static final int SCAN_BYTES = 4096;
    /** QUIC version 1, for the scratch config. */
    static final int QUIC_V1 = 1;

    /**
     * Test-only: with {@code -Dccagent.test.netty-config-layout=unreadable} the layout is never found,
     * so tests see how a config whose settings cannot be read is handled. Read once.
     */
    static final boolean TEST_UNREADABLE = "unreadable".equals(System.getProperty("ccagent.test.netty-config-layout"));

    final int ccOffset;
    final int hystartOffset;
    final int cwndOffset;
    /** Null when all three offsets are known; else why a live config cannot be read. */
    final String problem;
    private final MethodHandle getByte;

    private NettyConfigLayout(int cc, int hystart, int cwnd, String problem, MethodHandle getByte) {
        this.ccOffset = cc;
        this.hystartOffset = hystart;
        this.cwndOffset = cwnd;
        this.problem = problem;
        this.getByte = getByte;
    }

    /** The layout of {@code q}'s quiche, found at the first call (on the calling thread) and kept. */
    static NettyConfigLayout of(NettyQuiche q) {
        NettyConfigLayout l = q.configLayout;
        if (l == null) {
            synchronized (q) {
                l = q.configLayout;
                if (l == null) {
                    l = discover(q);
                    q.configLayout = l;
                    String line = "netty: " + q.packageName + " quiche " + q.quicheVersion + " config layout: "
                            + l.describe();
                    AgentLog.info(line);
                    dev.ccagent.agent.runtime.AgentRuntime.recordModule(line); // status shows it with the modules
                }
            }
        }
        return l;
    }

    /**
     * For the module's verdict (logged and shown by {@code attach} and {@code status}): whether the
     * settings of configs built before the agent can be read at their first connection on this system.
     */
    static String lateConfigsVerdict() {
        if (TEST_UNREADABLE) {
            return "quiche configs built before the agent: their settings cannot be read (injected by"
                    + " -Dccagent.test.netty-config-layout=unreadable), their connections keep the application's";
        }
        return new java.io.File("/proc/self/mem").canRead()
                ? "quiche configs built before the agent: their settings are read from quiche at their first connection"
                : "quiche configs built before the agent: their settings cannot be read (no readable /proc/self/mem),"
                + " their connections keep the application's";
    }

    String describe() {
        return problem == null
                ? "algorithm at +" + ccOffset + ", hystart at +" + hystartOffset + ", initial window at +" + cwndOffset
                + " (found on a scratch config): settings of configs older than the agent are read from quiche"
                : "not found (" + problem + "): configs older than the agent keep their settings untouched";
    }

    private static NettyConfigLayout unknown(String why) {
        return new NettyConfigLayout(-1, -1, -1, why, null);
    }

    static NettyConfigLayout discover(NettyQuiche q) {
        if (TEST_UNREADABLE) {
            return unknown("injected by -Dccagent.test.netty-config-layout=unreadable");
        }
        if (q.broken != null) {
            return unknown("Netty's quiche natives are not reachable: " + q.broken);
        }
        if (q.allRefusal != null) {
            // the probe passes ids 0 and 1: only where this quiche is known to take them
            return unknown("the agent does not drive this quiche: " + q.allRefusal);
        }
        Path mem = Path.of("/proc/self/mem");
        if (!mem.toFile().canRead()) {
            return unknown("no readable /proc/self/mem on this system");
        }
        try {
            Class<?> quiche = Class.forName(q.packageName + ".Quiche", false, q.loader);
            Method newConfig = quiche.getDeclaredMethod("quiche_config_new", int.class);
            Method freeConfig = quiche.getDeclaredMethod("quiche_config_free", long.class);
            newConfig.setAccessible(true);
            freeConfig.setAccessible(true);
            Class<?> pd = Class.forName("io.netty.util.internal.PlatformDependent", false, q.loader);
            MethodHandle getByte = MethodHandles.lookup().findStatic(pd, "getByte",
                    MethodType.methodType(byte.class, long.class));
            long config = (long) newConfig.invoke(null, QUIC_V1);
            if (config == 0 || config == -1) {
                return unknown("quiche_config_new gave no config");
            }
            // every field to a known value first, then one field at a time (reno/cubic only: valid in every quiche)
            long[][] steps = {
                    // cc, hystart, cwnd
                    {1, 1, 10}, {0, 1, 10}, {1, 1, 10}, {0, 1, 10}, {1, 1, 10},
                    {1, 0, 10}, {1, 1, 10}, {1, 0, 10},
                    {1, 0, 37}, {1, 0, 10}, {1, 0, 91}};
            byte[][] snapshots = new byte[steps.length][];
            try (FileChannel ch = FileChannel.open(mem, StandardOpenOption.READ)) {
                for (int i = 0; i < steps.length; i++) {
                    q.setCc(config, (int) steps[i][0]);
                    q.setHystart(config, steps[i][1] != 0);
                    q.setCwnd(config, (int) steps[i][2]);
                    snapshots[i] = read(ch, config, SCAN_BYTES);
                }
            } finally {
                freeConfig.invoke(null, config);
            }
            int cc = FieldOffsetFinder.find(snapshots, column(steps, 0), 1);
            int hystart = FieldOffsetFinder.find(snapshots, column(steps, 1), 1);
            int cwnd = FieldOffsetFinder.find(snapshots, column(steps, 2), 8);
            String problem = problem("algorithm", cc);
            problem = problem != null ? problem : problem("hystart", hystart);
            problem = problem != null ? problem : problem("initial window", cwnd);
            if (problem != null) {
                return unknown(problem + " in the first " + snapshots[0].length + " bytes of a scratch config");
            }
            return new NettyConfigLayout(cc, hystart, cwnd, null, getByte);
        } catch (Throwable t) {
            return unknown(t.toString());
        }
    }

    private static String problem(String field, int offset) {
        return offset == FieldOffsetFinder.NOT_FOUND ? field + " not found"
                : offset == FieldOffsetFinder.AMBIGUOUS ? field + " found at more than one offset" : null;
    }

    private static long[] column(long[][] steps, int c) {
        long[] out = new long[steps.length];
        for (int i = 0; i < steps.length; i++) {
            out[i] = steps[i][c];
        }
        return out;
    }

    /** Up to {@code n} bytes at {@code address}: fewer where a page is not mapped (the kernel stops there). */
    private static byte[] read(FileChannel ch, long address, int n) throws java.io.IOException {
        ByteBuffer b = ByteBuffer.allocate(n);
        while (b.hasRemaining()) {
            int got;
            try {
                got = ch.read(b, address + b.position());
            } catch (java.io.IOException unmapped) {
                if (b.position() == 0) {
                    throw unmapped;
                }
                break;
            }
            if (got <= 0) {
                break;
            }
        }
        byte[] out = new byte[b.position()];
        b.flip().get(out);
        return out;
    }

    /** quiche's algorithm id in the live config at {@code config} (0 reno, 1 cubic, 4 bbr), or -1 when unknown. */
    int ccId(long config) {
        if (problem != null) {
            return -1;
        }
        try {
            int id = (byte) getByte.invokeExact(config + ccOffset) & 0xff;
            return id == NettyQuiche.RENO || id == NettyQuiche.CUBIC || id == NettyQuiche.BBR ? id : -1;
        } catch (Throwable t) {
            return -1;
        }
    }

    /**
     * The settings of the live config at {@code config}, read from quiche's memory; null when the
     * layout is unknown or a value is not one quiche's types hold (then nothing is known).
     */
    NettyConfigs.AppSettings read(long config) throws Throwable {
        if (problem != null) {
            return null;
        }
        int cc = ccId(config);
        int hystart = (byte) getByte.invokeExact(config + hystartOffset) & 0xff;
        long cwnd = 0;
        for (int k = 7; k >= 0; k--) {
            cwnd = (cwnd << 8) | ((byte) getByte.invokeExact(config + cwndOffset + k) & 0xffL);
        }
        if (cc < 0 || hystart > 1 || cwnd < 1 || cwnd > 1_000_000) {
            return null;
        }
        String name = cc == NettyQuiche.RENO ? "RENO" : cc == NettyQuiche.CUBIC ? "CUBIC" : "BBR";
        return new NettyConfigs.AppSettings(cc, name, hystart == 1, (int) cwnd, NettyConfigs.FROM_LIVE_CONFIG);
    }
}
