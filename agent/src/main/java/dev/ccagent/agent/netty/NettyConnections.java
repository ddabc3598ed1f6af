package dev.ccagent.agent.netty;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.log.AgentLog;
import dev.ccagent.agent.runtime.AgentRuntime;
import dev.ccagent.agent.connection.SendTelemetry;
import dev.ccagent.agent.detect.SpinDetector;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.util.AttributeKey;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Live Netty QUIC connections with their assignment and their latest path stats, held weakly (a
 * side table: nothing is added to Netty's classes). Each connection's stats are sampled on its own
 * event loop (quiche frees a connection there, so that is the only safe place) every
 * {@code netty.stats.period}, through the public {@code QuicChannel.collectPathStats(int, Promise)},
 * and once more as the channel closes, just before Netty frees quiche's connection ({@link #beforeFree}):
 * the close summary counts everything quiche sent, the close itself included.
 *
 * <p>Each sample becomes a periodic {@code CongestionState} event while a JFR recording runs (window,
 * quiche's smoothed RTT, its delivery rate as the bandwidth estimate, packets lost; quiche's path
 * stats have no bytes in flight or bytes acknowledged, so those stay 0), and one {@code netty path}
 * line at debug.
 */
public final class NettyConnections {

    private static final Map<Connection, Boolean> LIVE = new WeakHashMap<>();

    /** The calls in which a Netty event loop waits for I/O (its poll): {@link NettyPollMethods}. */
    static final List<String> POLL_METHODS = NettyPollMethods.METHODS;

    /** A connection's task runs at least this often on its loop while spin detection is on. */
    static final long LOOP_TICK_NANOS = 1_000_000_000L;

    private static final AttributeKey<Connection> CONNECTION = AttributeKey.valueOf("dev.ccagent.netty.connection");

    /**
     * The channel whose {@code doClose()} runs on this thread (it frees that channel's quiche connection
     * before it returns), or none. Cleared when doClose returns: no event-loop thread keeps a channel.
     */
    private static final ThreadLocal<Object> CLOSING = new ThreadLocal<>();

    /** Whether the spin detector knows these connections (under the LIVE lock). */
    private static boolean detectorSource;

    /**
     * This copy's connections as the spin detector and the CPU monitor see them. Kept here: they hold
     * their sources weakly, so the copy of this class in a web application's loader (see
     * {@link NettyLinkage}) does not keep that loader once the application is gone.
     */
    private static final SpinDetector.TelemetrySource DETECTOR_SOURCE = action -> {
        for (Connection each : live()) {
            action.accept("quiche " + each.quicheAlgorithm(), each.telemetry);
        }
    };
    private static final dev.ccagent.agent.detect.CpuSpinMonitor.Source CPU_SOURCE = NettyConnections::cpuReadings;

    private NettyConnections() {
    }

    /** The send-path counters of a QUIC channel the agent registered, or null. */
    static SendTelemetry telemetryOf(Object channel) {
        AgentConfig cfg = AgentRuntime.config();
        if (cfg == null || !cfg.detect()) {
            return null;
        }
        Connection c = ((Channel) channel).attr(CONNECTION).get();
        return c != null ? c.telemetry : null;
    }

    /** quiche's name of the algorithm a registered QUIC channel runs, or null when it is not registered. */
    static String quicheAlgorithmOf(Channel channel) {
        Connection c = channel.attr(CONNECTION).get();
        return c != null ? c.quicheAlgorithm() : null;
    }

    /** A copy of the live connections. */
    public static List<Connection> live() {
        synchronized (LIVE) {
            return new ArrayList<>(LIVE.keySet());
        }
    }

    static void register(Object channel, NettyAlgorithmChoice.Selection selection) throws ReflectiveOperationException {
        AgentConfig cfg = AgentRuntime.config();
        long period = cfg != null ? cfg.netty().statsPeriodNanos() : 0;
        Connection c = new Connection((Channel) channel, selection, period, cfg != null && cfg.detect());
        // the channel holds its connection (and telemetry): the send-path hooks find it in O(log n), and
        // the weak table keeps it exactly as long as the channel lives
        ((Channel) channel).attr(CONNECTION).set(c);
        // the close summary as soon as the channel closes (the stats task may not run again before the JVM exits)
        ((Channel) channel).closeFuture().addListener(f -> {
            c.meter.closed();
            SpinDetector.connectionClosed(c.telemetry, "quiche " + c.quicheAlgorithm());
        });
        synchronized (LIVE) {
            if (!detectorSource) {
                detectorSource = true;
                SpinDetector.addSource(DETECTOR_SOURCE);
                dev.ccagent.agent.detect.CpuSpinMonitor.addSource(CPU_SOURCE);
            }
            LIVE.put(c, Boolean.TRUE);
        }
        if (c.tickNanos > 0) {
            c.dueNanos = System.nanoTime() + c.tickNanos;
            c.loop.schedule(c, c.tickNanos, TimeUnit.NANOSECONDS);
        }
    }

    /** doClose() of a linked channel starts on this thread: names it, and answers the channel named before (or null). */
    static Object closing(Object channel) {
        Object previous = CLOSING.get();
        CLOSING.set(channel);
        return previous;
    }

    /** doClose() returned: the channel named before it, or none. */
    static void closed(Object previous) {
        if (previous == null) {
            CLOSING.remove();
        } else {
            CLOSING.set(previous);
        }
    }

    /**
     * Netty is about to free a quiche connection on this thread: when it is the closing channel's, that
     * connection's last sample (what was sent since the periodic one, and the close), which the close
     * summary then holds.
     */
    static void beforeFree() {
        try {
            Object channel = CLOSING.get();
            Connection c = channel != null ? ((Channel) channel).attr(CONNECTION).get() : null;
            if (c != null) {
                c.sample();
            }
        } catch (Throwable t) {
            AgentRuntime.recordFallback("netty path stats", t);
        }
    }

    /**
     * The CPU spin monitor's view: the event-loop thread (shared by the loop's connections) and each
     * connection's datagrams sent and received and its send-loop entries and exits, from the send-path
     * counters the hooks keep anyway.
     */
    private static void cpuReadings(java.util.function.Consumer<dev.ccagent.agent.detect.CpuSpinMonitor.Reading> action) {
        for (Connection each : live()) {
            SendTelemetry t = each.telemetry;
            if (t.senderThreadId == 0 || !each.channel.isOpen()) {
                continue;
            }
            dev.ccagent.agent.detect.CpuSpinMonitor.Reading r = new dev.ccagent.agent.detect.CpuSpinMonitor.Reading();
            r.key = t;
            r.arm = "client".equals(t.role()) ? null : t.arm; // the guard judges served connections
            r.library = "netty";
            r.connectionId = t.connectionId();
            r.threadId = t.senderThreadId;
            r.thread = t.senderThread;
            r.kernelThreadId = t.senderKernelThreadId;
            r.sharedThread = true;
            r.datagrams = t.datagramsSent + t.packetsReceived;
            r.loopsEntered = t.wakeups;
            r.loopsExited = t.loopExits;
            r.taskDelayNanos = each.taskDelayNanos(System.nanoTime());
            r.pollMethods = POLL_METHODS;
            action.accept(r);
        }
    }

    /** One connection: its assignment and its latest path-0 sample. */
    public static final class Connection implements Runnable {
        private final Channel channel;
        private final EventLoop loop;
        private final NettyAlgorithmChoice.Selection selection;
        private final long periodNanos;
        /**
         * The connection's own task on its loop runs this often: every stats period, and at least every
         * {@link #LOOP_TICK_NANOS} while spin detection is on (how late it runs tells a blocked loop).
         */
        final long tickNanos;
        /** When the task should run next (System.nanoTime); 0 when it is not scheduled. */
        volatile long dueNanos;
        private long nextSampleNanos;
        /** Send-loop counters (event-loop thread), read by the spin detector. */
        final SendTelemetry telemetry = new SendTelemetry("netty", false);
        /** The same per-connection measurement as every arm gets (from quiche's path stats). */
        final NettyMeter meter;

        public volatile long samples;
        public volatile long cwndBytes;
        public volatile long rttNanos;
        public volatile long deliveryRateBytesPerSecond;
        public volatile long sentPackets;
        public volatile long lostPackets;
        public volatile long sentBytes;
        public volatile long lostBytes;

        Connection(Channel channel, NettyAlgorithmChoice.Selection selection, long periodNanos, boolean detect)
                throws ReflectiveOperationException {
            this.channel = channel;
            // the QUIC channel runs on its parent's event loop (and may not be registered yet)
            this.loop = channel.parent() != null ? channel.parent().eventLoop() : channel.eventLoop();
            this.selection = selection;
            this.periodNanos = periodNanos;
            this.tickNanos = detect ? (periodNanos > 0 ? Math.min(periodNanos, LOOP_TICK_NANOS) : LOOP_TICK_NANOS) : periodNanos;
            this.nextSampleNanos = System.nanoTime() + periodNanos;
            QuichePathStats.require(channel.getClass());
            telemetry.setConnectionId(selection.scidHex);
            telemetry.setRole(selection.side);
            this.meter = new NettyMeter(selection);
        }

        public SendTelemetry telemetry() {
            return telemetry;
        }

        /** quiche's name of the algorithm this connection runs (ours or the application's). */
        public String quicheAlgorithm() {
            return NettyAlgorithmChoice.runningAlgorithm(selection);
        }

        public String side() {
            return selection.side;
        }

        public String scid() {
            return selection.scidHex;
        }

        /** reno|cubic|bbr, or "app" when the application's own setting runs. */
        public String algorithm() {
            return selection.algorithm;
        }

        public String arm() {
            return selection.arm.label() + ":" + selection.armAlgorithm();
        }

        /** How late this connection's task on its loop is at {@code now} (0 when on time), -1 when none is scheduled. */
        long taskDelayNanos(long now) {
            long due = dueNanos;
            return due == 0 ? -1 : Math.max(0, now - due);
        }

        @Override
        public void run() {
            try {
                long now = System.nanoTime();
                if (!channel.isOpen()) {
                    dueNanos = 0;
                    finish();
                    return;
                }
                if (periodNanos > 0 && now - nextSampleNanos >= -tickNanos / 2) { // (a task may run a hair early)
                    nextSampleNanos = now + periodNanos;
                    sample();
                }
                dueNanos = now + tickNanos;
                loop.schedule(this, tickNanos, TimeUnit.NANOSECONDS);
            } catch (Throwable t) {
                dueNanos = 0;
                AgentRuntime.recordFallback("netty path stats", t);
            }
        }

        private void sample() throws ReflectiveOperationException {
            Object stats = QuichePathStats.sample(channel);
            if (stats == null) {
                return; // closed meanwhile (the promise failed)
            }
            cwndBytes = QuichePathStats.field(channel, stats, QuichePathStats.CWND);
            rttNanos = QuichePathStats.field(channel, stats, QuichePathStats.RTT);
            deliveryRateBytesPerSecond = QuichePathStats.field(channel, stats, QuichePathStats.DELIVERY_RATE);
            sentPackets = QuichePathStats.field(channel, stats, QuichePathStats.SENT);
            lostPackets = QuichePathStats.field(channel, stats, QuichePathStats.LOST);
            sentBytes = QuichePathStats.field(channel, stats, QuichePathStats.SENT_BYTES);
            lostBytes = QuichePathStats.field(channel, stats, QuichePathStats.LOST_BYTES);
            samples++;
            meter.sampled(sentBytes, lostBytes, sentPackets, lostPackets, rttNanos);
            if (dev.ccagent.jfr.JfrSwitch.on) {
                String algorithm = NettyAlgorithmChoice.runningAlgorithm(selection);
                dev.ccagent.agent.jfr.CcJfr.externalState("netty", selection.scidHex, selection.arm.label(), algorithm,
                        "quiche " + algorithm, cwndBytes, rttNanos, deliveryRateBytesPerSecond, lostPackets);
            }
            if (AgentLog.enabled(AgentLog.Level.DEBUG)) {
                AgentLog.debug("netty path " + describe());
            }
        }

        private String describe() {
            long[] hints = NettyPacingHooks.sendTimeStats();
            return "side=" + selection.side + " scid=" + selection.scidHex + " algorithm=" + selection.algorithm
                    + " cwnd=" + cwndBytes + " rttUs=" + rttNanos / 1000 + " deliveryRate=" + deliveryRateBytesPerSecond
                    + " sent=" + sentPackets + " lost=" + lostPackets + " sentBytes=" + sentBytes
                    + " lostBytes=" + lostBytes + " sendTimes=" + hints[0] + " aheadSendTimes=" + hints[1]
                    + " maxLeadUs=" + hints[2] / 1000 + " skippedSends=" + hints[3];
        }

        private void finish() {
            meter.closed();
            synchronized (LIVE) {
                LIVE.remove(this);
            }
            if (AgentLog.enabled(AgentLog.Level.DEBUG)) {
                AgentLog.debug("netty connection closed " + describe() + " samples=" + samples);
            }
        }
    }
}
