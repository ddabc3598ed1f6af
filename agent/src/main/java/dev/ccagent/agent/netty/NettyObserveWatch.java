package dev.ccagent.agent.netty;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.detect.CpuSpinMonitor;
import dev.ccagent.agent.log.AgentLog;
import dev.ccagent.agent.os.KernelThreads;
import dev.ccagent.agent.runtime.AgentRuntime;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Netty QUIC connections as the {@link CpuSpinMonitor} sees them observe-only ({@link NettyObserveModule}:
 * where the algorithm choice does not apply, so that none of its send-path counters exist). Each channel
 * is learnt at the end of its constructor ({@link #channelCreated}) and held weakly; once it is registered
 * (the detector's thread looks at each tick), a task of its own runs on its event loop, at once and then
 * every second while the channel is open: it notes the loop's thread and reads quiche's stats through
 * Netty's public {@code QuicChannel.collectStats()}: quiche's packets sent plus received, the connection's
 * progress (in place of the datagrams the algorithm choice's send-path counters count; quiche coalesces
 * packets into one datagram only during the handshake).
 * How late that task is tells a blocked loop, as with the algorithm choice's own task
 * ({@link NettyConnections}); the poll methods let the monitor tell a loop spinning through its poll.
 *
 * <p>What it cannot do without the send-loop counters: blame one connection. A spin is flagged at the
 * loop ({@code loopSpin} blocked or polling), naming its connections; a connection whose send loop spins
 * blocks its loop and shows as such.
 *
 * <p>No Netty type is linked: every Netty call goes through a method handle looked up from the channel's
 * own class (its loader's public {@code Channel}, {@code QuicChannel} and {@code QuicConnectionStats}), so
 * this class runs from the agent's loader whichever loader defines Netty, and is no helper. Nothing runs
 * on Netty's threads but the constructor hook (one synchronized put) and the task (one stats read a
 * second per connection); every failure falls back to Netty as it is, with one line.
 */
public final class NettyObserveWatch {

    /** The connection's task runs this often on its loop (as {@link NettyConnections#LOOP_TICK_NANOS}). */
    static final long TICK_NANOS = 1_000_000_000L;

    /** Channel (weakly) to its record (which holds the channel weakly too). */
    private static final Map<Object, Watched> LIVE = Collections.synchronizedMap(new WeakHashMap<>());
    private static volatile boolean sourceAdded;

    /** Kept here: the monitor holds its sources weakly. */
    private static final CpuSpinMonitor.Source CPU_SOURCE = NettyObserveWatch::readings;

    private static final String WHERE = "netty observe";
    private static final String CONSEQUENCE = "the connection runs as Netty runs it without the agent; the spin"
            + " monitor does not watch it";

    private NettyObserveWatch() {
    }

    /** End of a {@code QuicheQuicChannel} constructor (public: the advice runs inside Netty's class). */
    public static void channelCreated(Object channel) {
        try {
            AgentConfig config = AgentRuntime.config();
            if (config == null || !config.detect() || handles(channel.getClass()) == null) {
                return;
            }
            if (!sourceAdded) {
                synchronized (LIVE) {
                    if (!sourceAdded) {
                        CpuSpinMonitor.addSource(CPU_SOURCE);
                        sourceAdded = true;
                    }
                }
            }
            LIVE.putIfAbsent(channel, new Watched(channel));
        } catch (Throwable t) {
            AgentRuntime.recordFallback(WHERE, CONSEQUENCE, t);
        }
    }

    /** The number of channels watched (tests, status). */
    public static int watched() {
        return LIVE.size();
    }

    /** The monitor's view, on its thread: starts the task of each newly registered channel, reads the others. */
    private static void readings(Consumer<CpuSpinMonitor.Reading> action) {
        List<Watched> live;
        synchronized (LIVE) {
            live = new ArrayList<>(LIVE.values());
        }
        long now = System.nanoTime();
        for (Watched w : live) {
            Object channel = w.channel.get();
            if (channel == null || w.done) {
                forget(w, channel);
                continue;
            }
            Handles h = handles(channel.getClass());
            try {
                if (!(boolean) h.isOpen.invokeExact(channel)) {
                    forget(w, channel); // (a started task ends itself at its next run)
                    continue;
                }
                if (!w.started) {
                    if ((boolean) h.isRegistered.invokeExact(channel)) {
                        w.started = true;
                        ((Executor) (Object) h.eventLoop.invokeExact(channel)).execute(w);
                    }
                    continue;
                }
                Thread thread = w.thread;
                if (thread == null) {
                    continue; // its task has not run yet
                }
                if (w.id.isEmpty()) {
                    w.id = connectionId((Object) h.localAddress.invokeExact(channel));
                }
                CpuSpinMonitor.Reading r = new CpuSpinMonitor.Reading();
                r.key = w;
                r.library = "netty";
                r.connectionId = w.id;
                r.threadId = thread.getId();
                r.thread = thread;
                r.kernelThreadId = w.kernelThreadId;
                r.sharedThread = true;
                r.datagrams = w.packets;
                long due = w.dueNanos;
                r.taskDelayNanos = due == 0 ? -1 : Math.max(0, now - due);
                r.pollMethods = NettyPollMethods.METHODS;
                action.accept(r);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                forget(w, channel); // its loop is shutting down
            } catch (Throwable t) {
                forget(w, channel);
                AgentRuntime.recordFallback(WHERE, CONSEQUENCE, t);
            }
        }
    }

    private static void forget(Watched w, Object channel) {
        w.done = true;
        if (channel != null) {
            LIVE.remove(channel);
        } else {
            synchronized (LIVE) {
                LIVE.values().remove(w);
            }
        }
    }

    /** The connection id in a {@code QuicConnectionAddress}'s text (its first run of 16 or more hex digits), or "". */
    static String connectionId(Object address) {
        String s = String.valueOf(address);
        int run = 0;
        for (int i = 0; i < s.length(); i++) {
            if (Character.digit(s.charAt(i), 16) >= 0) {
                run++;
                continue;
            }
            if (run >= 16) {
                return s.substring(i - run, i).toLowerCase(java.util.Locale.ROOT);
            }
            run = 0;
        }
        return run >= 16 ? s.substring(s.length() - run).toLowerCase(java.util.Locale.ROOT) : "";
    }

    /** One channel: its loop's thread, quiche's byte counts and its task's due time, written by that task. */
    private static final class Watched implements Runnable {
        final WeakReference<Object> channel;
        volatile Thread thread;
        /** The loop thread's id in the kernel, written before {@link #thread}; -1 when the kernel does not say. */
        volatile int kernelThreadId = -1;
        /** When the task should run next (System.nanoTime); 0 when it is not scheduled. */
        volatile long dueNanos;
        /** quiche's packets sent plus received at the task's last run; -1 until the first. */
        volatile long packets = -1;
        volatile boolean done;
        /** Detector's thread only: whether the task was started, and the connection id once known. */
        boolean started;
        String id = "";

        Watched(Object channel) {
            this.channel = new WeakReference<>(channel);
        }

        /**
         * On the channel's event loop: at once, then every {@link #TICK_NANOS} while the channel is open and the
         * agent attached.
         */
        @Override
        public void run() {
            try {
                Object ch = channel.get();
                AgentConfig config = AgentRuntime.config(); // null once detached: nothing of the watch stays
                Handles h = ch != null && !done && config != null && config.detect() ? handles(ch.getClass()) : null;
                if (h == null || !(boolean) h.isOpen.invokeExact(ch)) {
                    dueNanos = 0;
                    done = true;
                    return;
                }
                if (thread == null) {
                    kernelThreadId = KernelThreads.currentId(); // read once per thread
                    thread = Thread.currentThread();
                }
                // on the loop, collectStats completes at once (the connection can only be freed here)
                java.util.concurrent.Future<?> stats = (java.util.concurrent.Future<?>) (Object) h.collectStats.invokeExact(ch);
                if (stats.isDone() && !stats.isCancelled()) {
                    try {
                        Object s = stats.get();
                        packets = (long) h.sent.invokeExact(s) + (long) h.recv.invokeExact(s);
                    } catch (java.util.concurrent.ExecutionException closedMeanwhile) {
                        // the connection is gone: the next run sees the channel closed
                    }
                }
                dueNanos = System.nanoTime() + TICK_NANOS;
                ((ScheduledExecutorService) (Object) h.eventLoop.invokeExact(ch)).schedule(this, TICK_NANOS,
                        TimeUnit.NANOSECONDS);
            } catch (Throwable t) {
                dueNanos = 0;
                done = true;
                if (!(t instanceof java.util.concurrent.RejectedExecutionException)) { // the loop shuts down
                    AgentRuntime.recordFallback(WHERE, CONSEQUENCE, t);
                }
            }
        }
    }

    /**
     * Per channel class (one per Netty package and loader): the Netty methods the watch calls, as handles
     * typed on Object; empty when they cannot be found. A {@link ClassValue}, stored with the class itself:
     * a handle references Netty's classes, so as a value of a static map keyed by that class it would keep
     * the class, and its loader, reachable for ever.
     */
    private static final ClassValue<Handles[]> HANDLES = new ClassValue<>() {
        @Override
        protected Handles[] computeValue(Class<?> type) {
            try {
                return new Handles[] {new Handles(type)};
            } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
                AgentLog.warnOnce("netty-observe-" + type.getName(), "CPU spin monitor cannot reach " + type.getName()
                        + "'s public methods; its connections are not watched", e);
                return new Handles[0];
            }
        }
    };

    private static Handles handles(Class<?> type) {
        Handles[] h = HANDLES.get(type);
        return h.length > 0 ? h[0] : null;
    }

    /** The handles of one channel class: Channel's and QuicChannel's public methods, and the stats'. */
    private static final class Handles {
        final MethodHandle isOpen;
        final MethodHandle isRegistered;
        final MethodHandle eventLoop;
        final MethodHandle localAddress;
        final MethodHandle collectStats;
        final MethodHandle sent;
        final MethodHandle recv;

        Handles(Class<?> channelClass) throws ReflectiveOperationException {
            ClassLoader loader = channelClass.getClassLoader();
            String pkg = channelClass.getPackageName();
            Class<?> channel = Class.forName("io.netty.channel.Channel", false, loader);
            Class<?> quicChannel = Class.forName(pkg + ".QuicChannel", false, loader);
            Class<?> stats = Class.forName(pkg + ".QuicConnectionStats", false, loader);
            MethodHandles.Lookup lookup = MethodHandles.publicLookup();
            MethodType bool = MethodType.methodType(boolean.class, Object.class);
            MethodType object = MethodType.methodType(Object.class, Object.class);
            MethodType number = MethodType.methodType(long.class, Object.class);
            isOpen = lookup.unreflect(channel.getMethod("isOpen")).asType(bool);
            isRegistered = lookup.unreflect(channel.getMethod("isRegistered")).asType(bool);
            eventLoop = lookup.unreflect(channel.getMethod("eventLoop")).asType(object);
            localAddress = lookup.unreflect(channel.getMethod("localAddress")).asType(object);
            collectStats = lookup.unreflect(quicChannel.getMethod("collectStats")).asType(object);
            sent = lookup.unreflect(stats.getMethod("sent")).asType(number);
            recv = lookup.unreflect(stats.getMethod("recv")).asType(number);
        }
    }
}
