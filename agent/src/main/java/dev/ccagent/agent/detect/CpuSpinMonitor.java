package dev.ccagent.agent.detect;

import dev.ccagent.agent.log.AgentLog;
import dev.ccagent.agent.os.KernelThreads;
import dev.ccagent.agent.runtime.AgentRuntime;
import dev.ccagent.jfr.CpuSpin;

import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * CPU without progress, whatever the loop's shape. Every {@value #PERIOD_MILLIS} ms (on the detector's
 * thread) it reads, for each thread that sends for a live connection, the thread's CPU time
 * ({@link ThreadMXBean#getThreadCpuTime}) and the progress of the connections it sends for
 * (application bytes moved, or datagrams for libraries whose byte counts the agent cannot read
 * cheaply). Nothing runs on the library's threads: kwik's own counters are read reflectively, Netty's
 * come from the existing send-loop counters.
 *
 * <p>A spin episode starts when, over the last {@value #WINDOW_SAMPLES} periods (2 s), the thread burned
 * at least {@value #SHARE_MIN} of a core (or, on a host short of CPU, a dedicated thread was RUNNABLE at
 * {@value #DEMAND_MIN} of the samples with at least {@value #SHARE_FLOOR} of a core) while its connections moved less than
 * {@value #BYTES_PER_CPU_SECOND} B (or {@value #DATAGRAMS_PER_CPU_SECOND} datagrams) per CPU second: a
 * CPU-bound bulk transfer moves megabytes per CPU second, a spinning loop nothing. It ends when the
 * connection closes (the thread ends or leaves), progress resumes, or the thread goes idle
 * (below {@value #SHARE_IDLE} of a core over the last second and RUNNABLE in fewer than half of its samples).
 *
 * <p>A thread shared between connections (Netty's event loop) is flagged only when its connections'
 * combined progress is nil; the episode is attributed to the connection stuck inside one send
 * iteration; else, when the tasks its connections scheduled on the loop are {@value #LOOP_BLOCKED_NANOS} ns
 * late or more (the loop is blocked in one call, not merely busy), to the loop itself, naming every
 * connection on it as starved and blaming none of them; else to the one with most send-loop wake-ups
 * (at least half of them, and {@value #LOOPS_PER_CPU_SECOND} per CPU second); else, when most stack samples
 * that find the loop awake (not asleep around them, by the kernel's count where it keeps one) find it inside its
 * poll ({@link Reading#pollMethods}) in two checks in a row, to the loop itself (it spins through its poll);
 * else to none (and no alarm: CPU not attributable to QUIC, and the loop still serves its connections).
 *
 * <p>Per episode: one WARN line and one status alarm at the start (with the thread's top frames from
 * one stack sample), an async-profiler capture when {@code profile-on-spin} is set, and
 * {@code dev.ccagent.CpuSpin} JFR events from the moment it is established: one at detection, one every
 * {@link #REPORT_EVERY_NANOS} while it lasts (top frames sampled again), one at its end, and one per open
 * episode whenever a chunk ends (recording stop, JVM exit; JFR's {@code endChunk} period), so that a
 * dump taken during the spin and the recording written at exit both hold it. {@link #openEpisodes()}
 * lists the open ones for {@code status}.
 */
public final class CpuSpinMonitor {

    static final long PERIOD_MILLIS = 250;
    static final int WINDOW_SAMPLES = 8;
    static final int END_SAMPLES = 4;
    static final double SHARE_MIN = 0.5;
    static final double SHARE_IDLE = 0.25;
    static final double SHARE_FLOOR = 0.05;
    static final double DEMAND_MIN = 0.9;
    static final long BYTES_PER_CPU_SECOND = 32 * 1024;
    static final long DATAGRAMS_PER_CPU_SECOND = 50;
    /**
     * On a shared thread, the connection with most send-loop entries is blamed only when it has at least this many
     * per CPU second of the thread's (a spinning send loop is entered thousands of times a second).
     */
    static final long LOOPS_PER_CPU_SECOND = 50;
    static final int TOP_FRAMES = 12;
    /**
     * A shared loop whose connections' tasks are this late is blocked, not busy: it starves them. A healthy
     * loop runs a task within milliseconds of its time (Vert.x warns of a blocked event loop after 2 s,
     * {@code VertxOptions.DEFAULT_MAX_EVENT_LOOP_EXECUTE_TIME}).
     */
    static final long LOOP_BLOCKED_NANOS = 1_000_000_000L;
    /** Stack samples, {@value #POLL_SAMPLE_SPACING_MILLIS} ms apart, that judge whether a shared loop spins through its poll. */
    static final int POLL_SAMPLES = 24;
    static final long POLL_SAMPLE_SPACING_MILLIS = 5;
    /**
     * A poll spin keeps its loop inside its poll without sleeping there: of the stack samples that find the loop
     * awake through them (running or waiting for a CPU, not asleep, over {@value #ON_CPU_WINDOW_NANOS} ns just before
     * the sample and just after), at least this share find it inside its poll, in {@value #POLL_CHECKS} checks in a
     * row, {@value #POLL_RECHECK_SAMPLES} periods apart. Where the kernel says (Linux: {@link KernelThreads}), awake
     * is its state R at the window's start and no voluntary context switch in it, however little CPU a loaded host
     * gives the loop. A stack sample alone cannot tell a loop parked in {@code epoll_wait} from one returning from it
     * at once, and on a loaded host the sampler tends to get a CPU just as the loop parks. Measured (2026-12-07,
     * docs/cpu-spin.md): CVE-2026-42577's spin 0.74-0.95 of its awake samples in the poll on a quiet machine (70 of
     * 83 pooled), 0.73-1.0 (111 of 132) at 0.56-0.59 of a core beside two busy processes; the busy epoll and NIO
     * loops of the no-false-alarm test at most 0.33 in 47 judged checks; Reactor Netty's HTTP/1.1 loop on a loaded
     * host, whose samples sat in its poll up to 23 of 24 times, at most 0.13 (asleep there at the others).
     */
    static final double POLL_SPIN_OF_AWAKE = 0.6;
    /**
     * Where the kernel does not say, a sample finds the loop awake when it ran at least {@value #ON_CPU_SHARE} of each
     * window (on a CPU), and this share of those must be in the poll (the busy NIO loop reached 0.56-0.63 in single
     * checks by that measure on Linux, the spin 0.83 on a quiet machine; not measured off Linux).
     */
    static final double POLL_SPIN_OF_ON_CPU = 0.7;
    /** Fewer samples awake than this (a third of them) is too little to judge. */
    static final int POLL_MIN_AWAKE = 8;
    static final long ON_CPU_WINDOW_NANOS = 1_000_000;
    /** Without the kernel's word, a thread is awake through a sample when it ran at least this share of each window. */
    static final double ON_CPU_SHARE = 0.8;
    static final int POLL_CHECKS = 2;
    static final int POLL_RECHECK_SAMPLES = 4;
    /** {@code loopSpin} of a loop blocked in one call, and of one that spins through its poll. */
    static final String BLOCKED = "blocked";
    static final String POLLING = "polling";
    /** An open episode's figures are committed again this often. */
    static final long REPORT_EVERY_NANOS = 5_000_000_000L;

    private static final java.util.concurrent.atomic.AtomicLong EPISODE_IDS = new java.util.concurrent.atomic.AtomicLong();
    /** Open episodes, for readers off the detector's thread (the chunk-end hook, status). */
    private static final Map<Long, Episode> OPEN = new java.util.concurrent.ConcurrentHashMap<>();

    /** One connection as a source sees it at one tick. Unknown counters are -1. */
    public static final class Reading {
        /** Identity of the connection (stable across ticks). */
        public Object key;
        public String library = "";
        public String connectionId = "";
        /** The thread that sends for it; 0 when not known yet. */
        public long threadId;
        /** The same thread, when the source has it (its state is read without a VM operation). */
        public Thread thread;
        /** The same thread's id in the kernel ({@link KernelThreads#currentId()}, read on it), -1 when not known. */
        public int kernelThreadId = -1;
        /** True when the thread serves other connections too (Netty's event loop). */
        public boolean sharedThread;
        public long appBytes = -1;
        public long bytesAcked = -1;
        public long ackEliciting = -1;
        public long datagrams = -1;
        public long loopsEntered = -1;
        public long loopsExited = -1;
        /**
         * How late a task the connection scheduled on its (shared) thread is now, in nanoseconds: 0 when on time,
         * -1 when not known. A loop blocked in one call delays them all; a busy loop that still runs its tasks does not.
         */
        public long taskDelayNanos = -1;
        /**
         * The calls in which the (shared) thread waits for I/O, its poll, as "class.method" suffixes of a frame
         * (a relocated copy's package prefix matches too); null when the source names none. A thread that burns
         * CPU while most stack samples find it there returns from its poll without work: it spins through it.
         */
        public java.util.List<String> pollMethods;
        public boolean closed;
        /** The connection's arm when it has one (the guard counts CPU spin episodes per arm). */
        public dev.ccagent.agent.measure.ArmStats arm;
    }

    /** A library module's live connections. */
    public interface Source {
        void forEach(Consumer<Reading> action);
    }

    private static final WeakSources<Source> SOURCES = new WeakSources<>("cpu-spin-source",
            "CPU spin monitor could not read a library's connections");

    /** Adds a module's connections to every tick (once per module), held weakly ({@link WeakSources}). */
    public static void addSource(Source source) {
        SOURCES.add(source);
    }

    private static volatile CpuSpinMonitor current;

    /** Per connection: the previous counters (to turn them into deltas) and its thread. */
    private static final class Conn {
        long appBytes = -1;
        long bytesAcked = -1;
        long ackEliciting = -1;
        long datagrams = -1;
        long loopsEntered = -1;
        long loopsExited = -1;
        long stuckSince;      // ticks with an unfinished, unchanged send iteration
        long windowLoops;     // loop entries over the last WINDOW_SAMPLES ticks (attribution): 0 once idle that long
        final long[] loopRing = new long[WINDOW_SAMPLES];
        int loopHead;
        long seen;
        Reading last;
    }

    /** An episode's figures since it started, as of one tick (immutable: read off the detector's thread). */
    private static final class Figures {
        final long atNanos;
        final long cpuTime;
        final long wall;
        final long moved;
        final long acked;
        final long ackEliciting;
        final long datagrams;
        final String topFrames;
        /** How late the thread's connections' tasks were, the longest wait so far (loop-level spins; 0 otherwise). */
        final long taskDelay;

        Figures(long atNanos, long cpuTime, long wall, long moved, long acked, long ackEliciting, long datagrams,
                String topFrames, long taskDelay) {
            this.atNanos = atNanos;
            this.cpuTime = cpuTime;
            this.wall = wall;
            this.moved = moved;
            this.acked = acked;
            this.ackEliciting = ackEliciting;
            this.datagrams = datagrams;
            this.topFrames = topFrames;
            this.taskDelay = taskDelay;
        }

        double share() {
            return wall > 0 ? cpuTime / (double) wall : 0;
        }
    }

    /** One episode in progress. */
    private static final class Episode {
        final long id = EPISODE_IDS.incrementAndGet();
        long threadId;
        long lastCommitNanos;
        volatile Figures figures;
        long startNanos;
        long startCpu;
        long startBytes;
        long startAcked;
        long startAckEliciting;
        long startDatagrams;
        String connectionId;
        /** {@link #BLOCKED} or {@link #POLLING} for a loop-level episode, "" otherwise. */
        String loopSpin = "";
        /** The longest wait of its connections' tasks seen in a loop-level episode so far (ns). */
        long maxTaskDelay;
        /** A polling episode: what the poll check that established it found ("19 of the 21 stack samples ..."). */
        String pollFinding = "";
        /** A loop-level episode: the ids of the QUIC connections on the loop (listed) and their number; "" and 0 otherwise. */
        String loopConnections = "";
        int loopConnectionCount;
        String library;
        String threadName;
        String topFrames;
        String flameGraph;
        /** Begun at the last commit: the next event of the episode covers the time since. */
        CpuSpin event;
    }

    /** Per thread: a ring of samples (time, CPU, cumulative progress of its connections). */
    private static final class Track {
        final long threadId;
        final long[] time = new long[WINDOW_SAMPLES + 1];
        final long[] cpu = new long[WINDOW_SAMPLES + 1];
        final long[] bytes = new long[WINDOW_SAMPLES + 1];
        final long[] dgrams = new long[WINDOW_SAMPLES + 1];
        /** Cumulative count of samples that found the thread RUNNABLE. */
        final long[] runnable = new long[WINDOW_SAMPLES + 1];
        long cumRunnable;
        Thread thread;
        /** Its id in the kernel, -1 when no source read it (its poll checks then go by CPU time alone). */
        int kernelId = -1;
        int count;
        int head = -1;
        long cumBytes;
        long cumAcked;
        long cumAckEliciting;
        long cumDatagrams;
        boolean bytesKnown;
        boolean datagramsKnown;
        boolean shared;
        /** Its poll's methods (see {@link Reading#pollMethods}), null when no source named them. */
        java.util.List<String> pollMethods;
        /** The tick of the latest poll check (at most one per window). */
        long pollCheckTick = Long.MIN_VALUE / 2;
        /** Poll checks in a row that found the loop spinning through its poll. */
        int pollHits;
        /** A poll check is due this tick: the window it judges (its first sample), its CPU then, its CPU share over it. */
        boolean pollCheckDue;
        int pollFrom;
        long pollCpu;
        double pollShare;
        /** This tick: the latest task of its connections (ns late), -1 when none is known. */
        long taskDelay = -1;
        /** The (only) connection of a dedicated thread is closing or closed. */
        boolean closed;
        long seen;
        Episode episode;

        Track(long threadId) {
            this.threadId = threadId;
        }

        void push(long t, long c) {
            head = (head + 1) % time.length;
            time[head] = t;
            cpu[head] = c;
            bytes[head] = cumBytes;
            dgrams[head] = cumDatagrams;
            runnable[head] = cumRunnable;
            count = Math.min(count + 1, time.length);
        }

        /** Index {@code back} samples before the newest. */
        int at(int back) {
            return ((head - back) % time.length + time.length) % time.length;
        }
    }

    private final ThreadMXBean threads;
    private final Supplier<ProfilerCapture> capture;
    /** One stack sample of each thread, as frame lines ("" for a thread that ended), in one VM operation (tests script it). */
    java.util.function.Function<long[], String[]> sampler = this::stacks;
    /** The short wait before and after each poll-check sample over which each loop stays awake or not (tests script it). */
    Runnable onCpuWindow = () -> java.util.concurrent.locks.LockSupport.parkNanos(ON_CPU_WINDOW_NANOS);
    /** A thread's sleeps so far by its kernel id ({@link KernelThreads#voluntarySwitches}; tests script it). */
    java.util.function.IntToLongFunction voluntarySwitches = KernelThreads::voluntarySwitches;
    /** A thread's state by its kernel id ({@link KernelThreads#state}; tests script it). */
    java.util.function.IntUnaryOperator kernelState = KernelThreads::state;
    private final Map<Object, Conn> conns = new IdentityHashMap<>();
    private final Map<Long, Track> tracks = new HashMap<>();
    private long tick;
    private volatile long episodes;
    private volatile long ongoing;

    CpuSpinMonitor(ThreadMXBean threads, Supplier<ProfilerCapture> capture) {
        this.threads = threads;
        this.capture = capture;
        current = this;
        EpisodeEvents.atChunkEnd(CpuSpin.class, CpuSpinMonitor::commitOpenEpisodes);
    }

    /** The chunk-end hook (JFR's thread): each open episode as of its latest tick, {@code endedBy = ongoing}. */
    static void commitOpenEpisodes() {
        for (Episode e : OPEN.values()) {
            Figures f = e.figures;
            if (f != null) {
                CpuSpin ev = new CpuSpin();
                if (ev.shouldCommit()) {
                    fill(ev, e, f, "ongoing");
                    ev.commit();
                }
            }
        }
    }

    /** Open episodes as {@code status} lines: where, since when, how much CPU and progress so far. */
    public static List<String> openEpisodes() {
        List<String> lines = new ArrayList<>();
        for (Episode e : OPEN.values()) {
            Figures f = e.figures;
            if (f != null) {
                lines.add(String.format(Locale.ROOT, "CPU spin on %s, thread \"%s\" (id %d): ongoing for "
                                + "%.1f s at %.0f%% of a core, %d B moved; top frames: %s", where(e),
                        e.threadName, e.threadId, (System.nanoTime() - e.startNanos) / 1e9, 100 * f.share(), f.moved,
                        firstFrames(f.topFrames, 3)));
            }
        }
        return lines;
    }

    /** Spin episodes started since the detector started (status, tests). */
    public static long episodes() {
        CpuSpinMonitor m = current;
        return m != null ? m.episodes : 0;
    }

    /** Episodes in progress now. */
    public static long ongoing() {
        CpuSpinMonitor m = current;
        return m != null ? m.ongoing : 0;
    }

    /** One sampling period (detector thread). */
    void tick() {
        tick(System.nanoTime());
    }

    /** One sampling period at {@code now} (tests drive the clock). */
    void tick(long now) {
        tick++;
        for (Track t : tracks.values()) {
            t.taskDelay = -1; // until one of its connections reports one this tick
        }
        List<Reading> readings = new ArrayList<>();
        SOURCES.readEach(s -> s.forEach(readings::add));
        for (Reading r : readings) {
            if (r.key == null || r.threadId == 0) {
                continue;
            }
            Conn c = conns.computeIfAbsent(r.key, k -> new Conn());
            c.seen = tick;
            Track t = tracks.get(r.threadId);
            if (t == null) {
                t = new Track(r.threadId);
                tracks.put(r.threadId, t);
                if (AgentLog.enabled(AgentLog.Level.DEBUG)) {
                    AgentLog.debug("CPU spin monitor: watching thread " + r.threadId + " (" + r.library
                            + (r.sharedThread ? ", shared by its connections" : "") + ") for connection " + r.connectionId);
                }
            }
            t.seen = tick;
            t.shared |= r.sharedThread;
            if (r.thread != null) {
                t.thread = r.thread;
            }
            if (r.kernelThreadId >= 0) {
                t.kernelId = r.kernelThreadId;
            }
            if (r.closed && !t.shared) {
                t.closed = true;
            }
            t.taskDelay = Math.max(t.taskDelay, r.taskDelayNanos);
            if (r.pollMethods != null) {
                t.pollMethods = r.pollMethods;
            }
            if (r.appBytes >= 0) {
                t.bytesKnown = true;
                t.cumBytes += delta(r.appBytes, c.appBytes);
                c.appBytes = r.appBytes;
            }
            if (r.bytesAcked >= 0) {
                t.bytesKnown = true;
                long d = delta(r.bytesAcked, c.bytesAcked);
                t.cumBytes += d;
                t.cumAcked += d;
                c.bytesAcked = r.bytesAcked;
            }
            if (r.ackEliciting >= 0) {
                t.cumAckEliciting += delta(r.ackEliciting, c.ackEliciting);
                c.ackEliciting = r.ackEliciting;
            }
            if (r.datagrams >= 0) {
                t.datagramsKnown = true;
                t.cumDatagrams += delta(r.datagrams, c.datagrams);
                c.datagrams = r.datagrams;
            }
            if (r.loopsEntered >= 0) {
                boolean inside = r.loopsExited >= 0 && r.loopsEntered > r.loopsExited;
                c.stuckSince = inside && r.loopsEntered == c.loopsEntered ? c.stuckSince + 1 : 0;
                // wake-ups over the last window (a sliding sum), for attribution on a shared thread
                long entered = c.loopsEntered < 0 ? 0 : Math.max(0, r.loopsEntered - c.loopsEntered);
                c.loopHead = (c.loopHead + 1) % WINDOW_SAMPLES;
                c.windowLoops += entered - c.loopRing[c.loopHead];
                c.loopRing[c.loopHead] = entered;
                c.loopsEntered = r.loopsEntered;
                c.loopsExited = r.loopsExited;
            }
            c.last = r;
        }
        // connections gone since the last tick
        conns.values().removeIf(c -> c.seen != tick);
        for (Iterator<Track> it = tracks.values().iterator(); it.hasNext(); ) {
            Track t = it.next();
            long cpu = t.seen == tick ? cpuTime(t.threadId) : -1;
            if (cpu < 0) { // thread ended or no connection left on it
                if (t.episode != null) {
                    end(t, now, -1, "close");
                }
                it.remove();
                continue;
            }
            if (runnable(t)) {
                t.cumRunnable++;
            }
            t.push(now, cpu);
            evaluate(t, now, cpu);
        }
        pollChecks(now);
    }

    private boolean runnable(Track t) {
        try {
            Thread.State state;
            if (t.thread != null) {
                state = t.thread.getState();
            } else {
                ThreadInfo info = threads.getThreadInfo(t.threadId, 0);
                state = info != null ? info.getThreadState() : Thread.State.TERMINATED;
            }
            return state == Thread.State.RUNNABLE;
        } catch (RuntimeException e) {
            return false;
        }
    }

    /**
     * Burning most of a core: at least {@value #SHARE_MIN} of one, or, on a host short of CPU, a dedicated
     * thread (never a shared event loop, which is RUNNABLE while parked in its selector) RUNNABLE
     * in at least {@value #DEMAND_MIN} of the samples with at least {@value #SHARE_FLOOR} of a core (it
     * wants a whole core; the scheduler gives it less).
     */
    private static boolean burning(Track t, int back, double cpuSeconds, double wall) {
        if (cpuSeconds >= SHARE_MIN * wall) {
            return true;
        }
        if (t.shared) {
            return false; // an event loop parked in epoll or select is RUNNABLE too: its CPU time alone counts
        }
        long samples = back;
        long runnable = t.runnable[t.head] - t.runnable[t.at(back)];
        return cpuSeconds >= SHARE_FLOOR * wall && runnable >= DEMAND_MIN * samples;
    }

    private static long delta(long value, long previous) {
        return previous < 0 ? 0 : Math.max(0, value - previous);
    }

    private long cpuTime(long threadId) {
        try {
            return threads.getThreadCpuTime(threadId);
        } catch (RuntimeException e) {
            return -1;
        }
    }

    private boolean noProgress(Track t, int back, double cpuSeconds) {
        int from = t.at(back);
        long dBytes = t.bytes[t.head] - t.bytes[from];
        long dDatagrams = t.dgrams[t.head] - t.dgrams[from];
        boolean bytesQuiet = !t.bytesKnown || dBytes < BYTES_PER_CPU_SECOND * Math.max(cpuSeconds, 0.25);
        boolean datagramsQuiet = !t.datagramsKnown || t.bytesKnown
                || dDatagrams < DATAGRAMS_PER_CPU_SECOND * Math.max(cpuSeconds, 0.25);
        return (t.bytesKnown || t.datagramsKnown) && bytesQuiet && datagramsQuiet;
    }

    private void evaluate(Track t, long now, long cpu) {
        if (t.closed) {
            if (t.episode != null) {
                end(t, now, cpu, "close");
            }
            return;
        }
        if (t.episode != null) {
            update(t, t.episode, now, cpu);
            if (t.count <= END_SAMPLES) {
                return;
            }
            int from = t.at(END_SAMPLES);
            double wall = (now - t.time[from]) / 1e9;
            double cpuSeconds = (cpu - t.cpu[from]) / 1e9;
            if (!noProgress(t, END_SAMPLES, cpuSeconds)) {
                end(t, now, cpu, "progress");
            } else if (cpuSeconds < SHARE_IDLE * wall
                    && (t.shared || t.runnable[t.head] - t.runnable[from] < END_SAMPLES / 2.0)) {
                end(t, now, cpu, "idle");
            }
            return;
        }
        if (t.count <= WINDOW_SAMPLES) {
            return;
        }
        int from = t.at(WINDOW_SAMPLES);
        double wall = (now - t.time[from]) / 1e9;
        double cpuSeconds = (cpu - t.cpu[from]) / 1e9;
        if (!burning(t, WINDOW_SAMPLES, cpuSeconds, wall) || !noProgress(t, WINDOW_SAMPLES, cpuSeconds)) {
            t.pollHits = 0;
            return;
        }
        boolean blocked = t.shared && t.taskDelay >= LOOP_BLOCKED_NANOS;
        Conn blamed = blame(t, blocked, cpuSeconds);
        if (blamed != null || blocked) {
            start(t, blamed, blocked ? BLOCKED : "", null, "", now, from, cpu, cpuSeconds / wall);
        } else if (t.shared && t.pollMethods != null
                && tick - t.pollCheckTick >= (t.pollHits > 0 ? POLL_RECHECK_SAMPLES : WINDOW_SAMPLES)) {
            // busy without QUIC progress, still running its tasks: in its handlers, or spinning through its poll?
            // (sampled after this tick's evaluations, together with every other loop due a check)
            t.pollCheckDue = true;
            t.pollFrom = from;
            t.pollCpu = cpu;
            t.pollShare = cpuSeconds / wall;
        }
        // else a shared thread busy with something no QUIC connection of ours explains, still running their tasks
    }

    /**
     * The poll checks due this tick, for all their loops at once: {@value #POLL_SAMPLES} rounds of one stack
     * sample of each ({@value #POLL_SAMPLE_SPACING_MILLIS} ms apart) and each loop's CPU time before and after,
     * so that the detector's thread waits {@value #POLL_SAMPLES} × {@value #POLL_SAMPLE_SPACING_MILLIS} ms however
     * many loops are due. A loop found spinning through its poll in {@value #POLL_CHECKS} checks in a row starts
     * a polling episode.
     */
    private void pollChecks(long now) {
        List<Track> due = new ArrayList<>();
        for (Track t : tracks.values()) {
            if (t.pollCheckDue) {
                t.pollCheckDue = false;
                t.pollCheckTick = tick;
                due.add(t);
            }
        }
        if (due.isEmpty()) {
            return;
        }
        long[] ids = new long[due.size()];
        long[] cpuBefore = new long[ids.length];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = due.get(i).threadId;
            cpuBefore[i] = cpuTime(ids[i]);
        }
        long wallBefore = System.nanoTime();
        int[] kernelIds = new int[ids.length];
        for (int i = 0; i < ids.length; i++) {
            kernelIds[i] = due.get(i).kernelId;
        }
        boolean[][] awake = new boolean[ids.length][POLL_SAMPLES];
        String[][] samples = samples(ids, kernelIds, awake, POLL_SAMPLES, POLL_SAMPLE_SPACING_MILLIS);
        long wall = Math.max(1, System.nanoTime() - wallBefore);
        for (int i = 0; i < ids.length; i++) {
            Track t = due.get(i);
            int n = samples[i].length;
            double sampledShare = Math.min(1, Math.max(0, (cpuTime(ids[i]) - cpuBefore[i]) / (double) wall));
            int inPoll = 0;
            int wake = 0;
            int awakeInPoll = 0;
            for (int k = 0; k < n; k++) {
                boolean there = inPoll(samples[i][k], t.pollMethods);
                inPoll += there ? 1 : 0;
                wake += awake[i][k] ? 1 : 0;
                awakeInPoll += awake[i][k] && there ? 1 : 0;
            }
            boolean spinning = wake >= POLL_MIN_AWAKE
                    && awakeInPoll >= (kernelIds[i] >= 0 ? POLL_SPIN_OF_AWAKE : POLL_SPIN_OF_ON_CPU) * wake;
            String finding = String.format(Locale.ROOT, "%d of the %d stack samples that found it %s were inside it, "
                    + "%d of %d in all", awakeInPoll, wake, kernelIds[i] >= 0 ? "awake (not asleep just before or "
                    + "after them by the kernel's count)" : "on a CPU", inPoll, n);
            t.pollHits = spinning ? t.pollHits + 1 : 0;
            if (t.pollHits >= POLL_CHECKS) {
                t.pollHits = 0;
                start(t, null, POLLING, samples[i], finding, now, t.pollFrom, t.pollCpu, t.pollShare);
            } else if (AgentLog.enabled(AgentLog.Level.DEBUG)) {
                AgentLog.debug(String.format(Locale.ROOT, "CPU spin monitor: loop thread %d at %.0f%% of a core without "
                        + "QUIC progress, tasks on time; poll check at %.0f%% of a core while sampled: %s; %s", t.threadId,
                        100 * t.pollShare, 100 * sampledShare, finding,
                        spinning ? "spinning through it (check " + t.pollHits + " of " + POLL_CHECKS + ")" : "busy, no spin"));
            }
        }
    }

    /** Whether {@code frames}' top frame is in one of {@code pollMethods} (a "class.method" suffix). */
    static boolean inPoll(String frames, java.util.List<String> pollMethods) {
        String top = firstLine(frames);
        int colon = top.lastIndexOf(':');
        String method = colon < 0 ? top : top.substring(0, colon);
        for (String poll : pollMethods) {
            if (method.endsWith(poll) && (method.length() == poll.length() || method.charAt(method.length() - poll.length() - 1) == '.')) {
                return true;
            }
        }
        return false;
    }

    /**
     * The connection a thread's spin belongs to; null when it cannot be told (shared thread), and on a
     * shared thread that is {@code blocked} (its connections' tasks wait behind one call) unless one
     * connection is stuck inside its send iteration: the loop itself spins, starving all of them.
     */
    private Conn blame(Track t, boolean blocked, double cpuSeconds) {
        Conn only = null;
        Conn stuck = null;
        Conn busiest = null;
        long loops = 0;
        int n = 0;
        for (Conn c : conns.values()) {
            if (c.last == null || c.last.threadId != t.threadId || c.last.closed) {
                continue;
            }
            n++;
            only = c;
            if (c.stuckSince >= 2 && (stuck == null || c.stuckSince > stuck.stuckSince)) {
                stuck = c;
            }
            loops += c.windowLoops;
            if (busiest == null || c.windowLoops > busiest.windowLoops) {
                busiest = c;
            }
        }
        if (!t.shared) {
            return n == 1 ? only : stuck != null ? stuck : busiest;
        }
        if (stuck != null) {
            return stuck;
        }
        if (blocked) {
            return null;
        }
        // a connection whose send loop the thread entered a few times (a handshake, a timer) explains no core
        return busiest != null && busiest.windowLoops >= LOOPS_PER_CPU_SECOND * Math.max(cpuSeconds, 0.25)
                && 2 * busiest.windowLoops >= loops ? busiest : null;
    }

    /**
     * Starts an episode blamed on {@code blamed}, or, when null, on the shared loop itself ({@code loopSpin}:
     * blocked, every connection on it starved; or polling, from {@code samples} of which {@code inPoll} in the poll;
     * "" when a connection is blamed).
     */
    private void start(Track t, Conn blamed, String loopSpin, String[] samples, String pollFinding, long now,
                       int from, long cpu, double share) {
        Episode e = new Episode();
        e.startNanos = t.time[from];
        e.startCpu = t.cpu[from];
        e.startBytes = t.bytes[from];
        e.startDatagrams = t.dgrams[from];
        e.startAcked = t.cumAcked;
        e.startAckEliciting = t.cumAckEliciting;
        if (blamed != null) {
            e.library = blamed.last.library;
            e.connectionId = blamed.last.connectionId;
        } else {
            listLoopConnections(t, e);
            e.loopSpin = loopSpin;
            e.pollFinding = pollFinding;
        }
        ThreadInfo info = stack(t.threadId);
        e.threadName = info != null ? info.getThreadName() : "";
        e.topFrames = samples != null ? mostFrequentTop(samples, samples.length) : sampledFrames(t.threadId, frames(info));
        ProfilerCapture p = capture.get();
        String what = "CPU spin on " + where(e);
        e.flameGraph = p != null ? p.trigger(what) : null;
        if (e.flameGraph == null) {
            e.flameGraph = "";
        }
        e.threadId = t.threadId;
        t.episode = e;
        episodes++;
        ongoing++;
        e.figures = figures(t, e, now, cpu, e.topFrames);
        OPEN.put(e.id, e);
        commit(e, e.figures, "ongoing");
        String moved = (t.cumBytes - e.startBytes) + " B (" + (t.bytesKnown ? "application bytes"
                : (t.dgrams[t.head] - e.startDatagrams) + " datagrams") + ")";
        String line = blamed != null
                ? String.format(Locale.ROOT, "CPU spin on %s: thread \"%s\" (id %d) burned %.0f%% of a core for %.1f s "
                        + "while the connection moved %s; top frames: %s", where(e), e.threadName, t.threadId, 100 * share,
                (now - e.startNanos) / 1e9, moved, firstFrames(e.topFrames, 3))
                : BLOCKED.equals(e.loopSpin)
                ? String.format(Locale.ROOT, "CPU spin on %s: thread \"%s\" (id %d) burned %.0f%% of a core for %.1f s, "
                        + "its QUIC connections' tasks %.1f s late, they moved %s; starved connections: %s; top frames: %s",
                where(e), e.threadName, t.threadId, 100 * share, (now - e.startNanos) / 1e9, e.figures.taskDelay / 1e9,
                moved, e.loopConnections, firstFrames(e.topFrames, 3))
                : String.format(Locale.ROOT, "CPU spin on %s: thread \"%s\" (id %d) burned %.0f%% of a core for %.1f s "
                        + "returning from its poll without work (%s), its QUIC connections' tasks %.3f s late, they moved %s; "
                        + "QUIC connections on the loop: %s; top frames: %s",
                where(e), e.threadName, t.threadId, 100 * share, (now - e.startNanos) / 1e9, e.pollFinding,
                e.figures.taskDelay / 1e9, moved, e.loopConnections, firstFrames(e.topFrames, 3));
        AgentLog.warn(line + (e.flameGraph.isEmpty() ? "" : "; flame graph " + e.flameGraph));
        AgentRuntime.recordAlarm(line);
        if (blamed != null && blamed.last.arm != null) {
            blamed.last.arm.cpuSpin(e.connectionId, now); // server CPU without progress: evidence for the guard
        }
        if (AgentLog.enabled(AgentLog.Level.DEBUG)) {
            AgentLog.debug("CPU spin stack of \"" + e.threadName + "\":\n  " + e.topFrames.replace("\n", "\n  "));
        }
    }

    /** "netty connection ID", or for a loop-level spin "netty event loop (blocked, N QUIC connections starved)". */
    private static String where(Episode e) {
        if (!loopLevel(e)) {
            return e.library + " connection " + e.connectionId;
        }
        String n = e.loopConnectionCount + " QUIC connection" + (e.loopConnectionCount == 1 ? "" : "s");
        return BLOCKED.equals(e.loopSpin) ? e.library + " event loop (blocked, " + n + " starved)"
                : e.library + " event loop (polling without work, " + n + " on it)";
    }

    /** A spin of the shared loop itself, blaming no connection. */
    private static boolean loopLevel(Episode e) {
        return !e.loopSpin.isEmpty();
    }

    /** A loop-level episode: every open connection on the loop's thread waits behind it, none blamed. */
    private void listLoopConnections(Track t, Episode e) {
        StringBuilder ids = new StringBuilder();
        int n = 0;
        String library = "";
        for (Conn c : conns.values()) {
            if (c.last == null || c.last.threadId != t.threadId || c.last.closed) {
                continue;
            }
            library = c.last.library;
            if (n < CpuSpin.LOOP_CONNECTIONS_LISTED) {
                ids.append(n == 0 ? "" : ",").append(c.last.connectionId);
            }
            n++;
        }
        if (n > CpuSpin.LOOP_CONNECTIONS_LISTED) {
            ids.append(" (+").append(n - CpuSpin.LOOP_CONNECTIONS_LISTED).append(" more)");
        }
        e.library = library;
        e.connectionId = "";
        e.loopConnections = ids.toString();
        e.loopConnectionCount = n;
    }

    /** The episode's figures since it started, as of {@code now}. */
    private static Figures figures(Track t, Episode e, long now, long cpu, String topFrames) {
        if (loopLevel(e) && t.taskDelay > e.maxTaskDelay) {
            e.maxTaskDelay = t.taskDelay;
        }
        long taskDelay = e.maxTaskDelay;
        return new Figures(now, (cpu >= 0 ? cpu : t.cpu[t.head]) - e.startCpu, now - e.startNanos,
                t.cumBytes - e.startBytes, t.cumAcked - e.startAcked, t.cumAckEliciting - e.startAckEliciting,
                t.dgrams[t.head] - e.startDatagrams, topFrames, taskDelay);
    }

    /** Each tick of an open episode: its figures for the readers off this thread, and its periodic event. */
    private void update(Track t, Episode e, long now, long cpu) {
        String frames = e.topFrames;
        boolean report = now - e.lastCommitNanos >= REPORT_EVERY_NANOS;
        if (report) {
            String again = sampledFrames(t.threadId, "");
            if (!again.isEmpty()) {
                frames = again;
                e.topFrames = again;
            }
        }
        e.figures = figures(t, e, now, cpu, frames);
        if (report) {
            commit(e, e.figures, "ongoing");
        }
    }

    /** One event of the episode: the time since its previous one, its figures since it started (detector thread). */
    private static void commit(Episode e, Figures f, String endedBy) {
        e.lastCommitNanos = f.atNanos;
        e.event = EpisodeEvents.commit(e.event, CpuSpin::new, ev -> fill(ev, e, f, endedBy), "ongoing".equals(endedBy));
    }

    private static void fill(CpuSpin ev, Episode e, Figures f, String endedBy) {
        ev.episodeId = e.id;
        ev.episodeDuration = f.wall;
        ev.library = e.library;
        ev.connectionId = e.connectionId;
        ev.threadName = e.threadName;
        ev.threadId = e.threadId;
        ev.cpuShare = f.share();
        ev.cpuTime = f.cpuTime;
        ev.bytesAcked = f.acked;
        ev.ackElicitingSent = f.ackEliciting;
        ev.appBytes = f.moved - f.acked;
        ev.datagrams = f.datagrams;
        ev.topFrames = f.topFrames;
        ev.flameGraph = e.flameGraph;
        ev.loopConnections = e.loopConnections;
        ev.loopConnectionCount = e.loopConnectionCount;
        ev.loopTaskDelay = f.taskDelay;
        ev.loopSpin = e.loopSpin;
        ev.endedBy = endedBy;
        ev.detectedAfter = WINDOW_SAMPLES * PERIOD_MILLIS * 1_000_000L;
    }

    private void end(Track t, long now, long cpu, String endedBy) {
        Episode e = t.episode;
        t.episode = null;
        ongoing--;
        OPEN.remove(e.id);
        Figures f = figures(t, e, now, cpu, e.topFrames);
        long cpuTime = f.cpuTime;
        long wall = f.wall;
        double share = f.share();
        long moved = f.moved;
        AgentLog.warn(String.format(Locale.ROOT, "CPU spin on %s ended (%s) after %.1f s: thread \"%s\" "
                        + "used %.1f s of CPU (%.0f%%), %s moved %s meanwhile", where(e),
                endedBy, wall / 1e9, e.threadName, cpuTime / 1e9, 100 * share,
                loopLevel(e) ? "its connections" : "the connection",
                t.bytesKnown || !t.datagramsKnown ? moved + " B" : f.datagrams + " datagrams"));
        AgentRuntime.recordAlarm(String.format(Locale.ROOT, "CPU spin on %s ended (%s) after %.1f s",
                where(e), endedBy, wall / 1e9));
        commit(e, f, endedBy);
        // a new episode on this thread needs a whole new window
        t.count = 0;
    }

    /** Ends every episode in progress (detector stopping: detach or reconfiguration). */
    void close(String endedBy) {
        long now = System.nanoTime();
        for (Track t : tracks.values()) {
            if (t.episode != null) {
                end(t, now, cpuTime(t.threadId), endedBy);
            }
        }
        tracks.clear();
        conns.clear();
        if (current == this) {
            current = null;
        }
    }

    private ThreadInfo stack(long threadId) {
        try {
            return threads.getThreadInfo(threadId, TOP_FRAMES);
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** Stack samples behind an episode's top frames, {@link #SAMPLE_SPACING_MILLIS} apart. */
    static final int STACK_SAMPLES = 8;
    static final long SAMPLE_SPACING_MILLIS = 2;

    /**
     * The burning thread's frames as most of {@link #STACK_SAMPLES} samples see them: the sample
     * whose top frame is the most frequent (the latest of those). One sample is one instant: a loop
     * that spends 95% of its time in one method is caught elsewhere one time in twenty, and on-call
     * would read that instant as the spin's place. {@code first}: a sample already taken (or "").
     * Runs on the monitor's thread, at an episode's start and at each periodic report only.
     */
    String sampledFrames(long threadId, String first) {
        String[] samples = new String[STACK_SAMPLES];
        int n = 0;
        if (!first.isEmpty()) {
            samples[n++] = first;
        }
        String[] more = samples(new long[] {threadId}, STACK_SAMPLES - n, SAMPLE_SPACING_MILLIS)[0];
        System.arraycopy(more, 0, samples, n, more.length);
        return mostFrequentTop(samples, n + more.length);
    }

    /**
     * Up to {@code count} stack samples of each thread, {@code spacingMillis} apart, all threads in each round
     * (fewer for a thread that ends: its samples stop there).
     */
    String[][] samples(long[] threadIds, int count, long spacingMillis) {
        return samples(threadIds, null, null, count, spacingMillis);
    }

    /**
     * As {@link #samples(long[], int, long)}; with {@code awake}, each round watches each thread over an
     * {@link #onCpuWindow} (about {@value #ON_CPU_WINDOW_NANOS} ns) just before its stack sample and one just after
     * (outside the VM operation that takes it), and notes in {@code awake[thread][sample]} whether it stayed awake
     * through both ({@link #awakeWindow}): not parking at the sample nor woken at it.
     */
    String[][] samples(long[] threadIds, int[] kernelIds, boolean[][] awake, int count, long spacingMillis) {
        boolean[] before = awake != null ? new boolean[threadIds.length] : null;
        boolean[] after = awake != null ? new boolean[threadIds.length] : null;
        String[][] samples = new String[threadIds.length][count];
        int[] n = new int[threadIds.length];
        boolean[] ended = new boolean[threadIds.length];
        for (int round = 0; round < count; round++) {
            try {
                Thread.sleep(spacingMillis);
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
                break;
            }
            if (awake != null) {
                awakeWindow(threadIds, kernelIds, before);
            }
            String[] frames = sampler.apply(threadIds);
            if (awake != null) {
                awakeWindow(threadIds, kernelIds, after);
            }
            for (int i = 0; i < threadIds.length; i++) {
                ended[i] |= frames[i].isEmpty();
                if (!ended[i]) {
                    if (awake != null) {
                        awake[i][n[i]] = before[i] && after[i];
                    }
                    samples[i][n[i]++] = frames[i];
                }
            }
        }
        for (int i = 0; i < threadIds.length; i++) {
            if (n[i] < count) {
                samples[i] = java.util.Arrays.copyOf(samples[i], n[i]);
            }
        }
        return samples;
    }

    /**
     * Whether each thread stayed awake over one {@link #onCpuWindow}, into {@code awake}: where the kernel says
     * ({@code kernelIds}), it was running or waiting for a CPU at the window's start and did not go to sleep in it
     * (its voluntary context switches did not move), however little CPU it got; elsewhere, it ran at least
     * {@value #ON_CPU_SHARE} of the window.
     */
    private void awakeWindow(long[] threadIds, int[] kernelIds, boolean[] awake) {
        // per thread: its sleeps so far where the kernel counts them, else its CPU time so far
        boolean[] counted = new boolean[threadIds.length];
        long[] start = new long[threadIds.length];
        for (int i = 0; i < threadIds.length; i++) {
            start[i] = kernelIds[i] >= 0 ? voluntarySwitches.applyAsLong(kernelIds[i]) : -1;
            counted[i] = start[i] >= 0;
            awake[i] = !counted[i] || kernelState.applyAsInt(kernelIds[i]) == KernelThreads.RUNNING;
            if (!counted[i]) {
                start[i] = cpuTime(threadIds[i]);
            }
        }
        long w0 = System.nanoTime();
        onCpuWindow.run();
        long window = System.nanoTime() - w0;
        for (int i = 0; i < threadIds.length; i++) {
            awake[i] &= counted[i] ? voluntarySwitches.applyAsLong(kernelIds[i]) == start[i]
                    : cpuTime(threadIds[i]) - start[i] >= ON_CPU_SHARE * window;
        }
    }

    /** One stack sample of each thread ("" for one that ended), in one {@link ThreadMXBean#getThreadInfo} call. */
    private String[] stacks(long[] threadIds) {
        String[] frames = new String[threadIds.length];
        ThreadInfo[] infos;
        try {
            infos = threads.getThreadInfo(threadIds, TOP_FRAMES);
        } catch (RuntimeException e) {
            infos = new ThreadInfo[threadIds.length];
        }
        for (int i = 0; i < threadIds.length; i++) {
            frames[i] = frames(infos != null && i < infos.length ? infos[i] : null);
        }
        return frames;
    }

    /** Of {@code n} frame strings, the latest whose first line is the most frequent first line ("" for none). */
    static String mostFrequentTop(String[] samples, int n) {
        String best = "";
        int bestCount = 0;
        for (int i = n - 1; i >= 0; i--) {
            String top = firstLine(samples[i]);
            int count = 0;
            for (int j = 0; j < n; j++) {
                if (firstLine(samples[j]).equals(top)) {
                    count++;
                }
            }
            if (count > bestCount) {
                best = samples[i];
                bestCount = count;
            }
        }
        return best;
    }

    private static String firstLine(String frames) {
        int nl = frames.indexOf('\n');
        return nl < 0 ? frames : frames.substring(0, nl);
    }

    static String frames(ThreadInfo info) {
        if (info == null) {
            return "";
        }
        StringBuilder sb = new StringBuilder();
        for (StackTraceElement f : info.getStackTrace()) {
            if (sb.length() > 0) {
                sb.append('\n');
            }
            sb.append(f.getClassName()).append('.').append(f.getMethodName());
            if (f.getLineNumber() > 0) {
                sb.append(':').append(f.getLineNumber());
            }
        }
        return sb.toString();
    }

    static String firstFrames(String frames, int n) {
        String[] lines = frames.split("\n");
        return lines.length == 0 || frames.isEmpty() ? "(no stack)"
                : String.join(" <- ", java.util.Arrays.copyOf(lines, Math.min(n, lines.length)));
    }
}
