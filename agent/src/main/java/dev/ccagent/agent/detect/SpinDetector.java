package dev.ccagent.agent.detect;

import dev.ccagent.agent.connection.SendTelemetry;
import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.connection.LiveConnections;
import dev.ccagent.agent.connection.LiveConnection;
import dev.ccagent.agent.log.AgentLog;
import dev.ccagent.jfr.AckOnlySendLoop;
import dev.ccagent.jfr.JfrSwitch;
import dev.ccagent.jfr.SendLoopSpin;
import dev.ccagent.jfr.SendPathAllocation;

import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Evaluates every live connection's {@link SendTelemetry} once per window (1 s) on one daemon
 * thread ({@code ccagent-detector}); nothing runs per packet. Per window:
 * <ul>
 *   <li><b>ACK-only send loop</b>: at least {@value #ACK_ONLY_MIN} ACK-only datagrams and
 *       {@value #ACK_ONLY_RATE}/s, at most {@value #ACK_ELICITING_BYTES_MAX} bytes of ack-eliciting
 *       packets (PINGs kwik adds to ACKs are tens of bytes; data is not), while the controller refused to send (so the sender had something to say): a
 *       healthy upload-only receiver acks just as much but its controller never refuses.</li>
 *   <li><b>Send-loop spin</b>: at least {@value #PAST_RATE}/s "no budget but a send time in the
 *       past" answers, or {@value #EMPTY_RATE}/s wake-ups that sent nothing beyond the ones received
 *       packets explain (each received packet wakes kwik's sender once), more than
 *       {@value #EMPTY_PER_DATA_PACKET} for each ack-eliciting packet sent (a connection moving data at
 *       the link's rate wakes for its pacer and its window too).</li>
 *   <li><b>Allocation</b>: bytes allocated by the connection's sender and receiver threads
 *       ({@code com.sun.management.ThreadMXBean#getThreadAllocatedBytes}) per packet; flagged above
 *       {@value #ALLOC_RATE_FLAG} B/s, or above {@value #ALLOC_PER_PACKET_FLAG} B/packet at more than
 *       {@value #ALLOC_RATE_MIN} B/s. A thread shared between connections (Netty's event loop) is judged
 *       once per loop and window, against all its QUIC connections' packets, and only on its rate (the
 *       loop serves other work too): its allocation is the loop's, not copied to each connection.</li>
 * </ul>
 * A connection's windows cover it from its sender's first iteration to its close: the first window
 * starts there (once it is at least half a window old), the last ends at the close
 * ({@link #connectionClosed}, which reads the allocation counters while the connection's threads still
 * run), so a connection shorter than a window is recorded too. The spin rules judge windows of at
 * least half a window; a shorter last window is recorded for allocation only, and every rule needs at
 * least the counts a full window would need (a short window is never judged on its rate alone).
 * Every {@value CpuSpinMonitor#PERIOD_MILLIS} ms, on the same thread, {@link CpuSpinMonitor} compares each
 * sending thread's CPU time with its connection's progress (spins of any shape).
 * A detection writes the JFR event, logs one line (at most once a minute per connection and kind)
 * and asks {@link ProfilerCapture} for a capture when {@code profile-on-spin} is set.
 */
public final class SpinDetector {

    static final long WINDOW_MILLIS = 1000;
    private static final long WINDOW_NANOS = WINDOW_MILLIS * 1_000_000L;
    static final long ACK_ONLY_MIN = 50;
    static final long ACK_ONLY_RATE = 50;
    static final long ACK_ELICITING_BYTES_MAX = 4 * 1200;
    static final long PAST_RATE = 50;
    static final long EMPTY_RATE = 500;
    /** Empty wake-ups count as a spin only beyond this many per ack-eliciting packet sent in the window. */
    static final long EMPTY_PER_DATA_PACKET = 10;
    static final long ALLOC_RATE_FLAG = 256L * 1024 * 1024;
    static final long ALLOC_PER_PACKET_FLAG = 256 * 1024;
    static final long ALLOC_RATE_MIN = 16L * 1024 * 1024;
    private static final long LOG_EVERY_NANOS = 60_000_000_000L;

    private static SpinDetector running;

    /**
     * Live connections of a library module other than kwik (registered by the module itself, so this
     * class never loads a library's classes): each with its algorithm's name and its telemetry.
     */
    public interface TelemetrySource {
        void forEach(java.util.function.BiConsumer<String, SendTelemetry> action);
    }

    /** Held weakly (see {@link #addSource}). */
    private static final List<java.lang.ref.WeakReference<TelemetrySource>> SOURCES =
            new java.util.concurrent.CopyOnWriteArrayList<>();

    /** Closed connections whose last window is still to be evaluated: held until the next window, then dropped. */
    private final java.util.Queue<SendTelemetry> closed = new java.util.concurrent.ConcurrentLinkedQueue<>();

    /**
     * Adds a module's connections to every detector window. The source is held weakly: its module
     * keeps it (in a static field), so a source whose class an application's loader defined (Netty's
     * helpers in a web application) never keeps that loader after the application is undeployed.
     */
    public static void addSource(TelemetrySource source) {
        SOURCES.add(new java.lang.ref.WeakReference<>(source));
    }

    private final dev.ccagent.agent.runtime.AgentScheduler timer;
    private final dev.ccagent.agent.runtime.AgentScheduler.Task task;
    private final dev.ccagent.agent.runtime.AgentScheduler.Task cpuTask;
    private final CpuSpinMonitor cpu;
    private final StreamStallMonitor streams;
    private final com.sun.management.ThreadMXBean threads;
    private volatile ProfilerCapture capture;
    private volatile long detections;
    // the recording budget of unflagged SendPathAllocation events (this timer's thread only): at most
    // jfr.state-connections connections a window, in rotation; each connection gets a slot at its first window
    private long windows;
    private long nextSlot;
    private int evaluatedLastTick;
    private int evaluatedThisTick;
    private int measuredThisTick;
    private int allocationEvery = 1;
    private int allocationCap;
    /** {@code jfr.state-connections} as last applied. */
    private volatile int allocationBudget;
    /** Shared threads (event loops) by thread id: their allocation is judged per loop (this timer's thread only). */
    private final Map<Long, LoopAllocation> loops = new HashMap<>();

    /** One shared thread's allocation window: its counter at the start, its QUIC connections' packets since. */
    private static final class LoopAllocation {
        final long threadId;
        final String library;
        long startAlloc = -1;
        long startNanos;
        long packets;
        int connections;
        long quietWindows;
        long lastLog;

        LoopAllocation(long threadId, String library) {
            this.threadId = threadId;
            this.library = library;
        }
    }

    private SpinDetector(AgentConfig config) {
        this.allocationBudget = config.stateConnections();
        this.threads = threadBean();
        this.capture = config.profileOnSpinDir() != null ? new ProfilerCapture(config.profileOnSpinDir(),
                config.profileDurationNanos(), config.profileEveryNanos()) : null;
        // the agent's own scheduler, not a JDK executor: pins no application loader (see AgentScheduler)
        this.timer = new dev.ccagent.agent.runtime.AgentScheduler("ccagent-detector");
        long window = TimeUnit.MILLISECONDS.toNanos(WINDOW_MILLIS);
        this.task = timer.withFixedDelay(this::tick, window, window);
        this.cpu = new CpuSpinMonitor(ManagementFactory.getThreadMXBean(), () -> capture);
        this.streams = new StreamStallMonitor();
        long cpuPeriod = TimeUnit.MILLISECONDS.toNanos(CpuSpinMonitor.PERIOD_MILLIS);
        this.cpuTask = timer.atFixedRate(this::cpuTick, cpuPeriod, cpuPeriod);
    }

    private void cpuTick() {
        try {
            cpu.tick();
        } catch (Throwable t) {
            AgentLog.warnOnce("cpu-spin-tick", "CPU spin monitor tick failed", t);
        }
    }

    private static com.sun.management.ThreadMXBean threadBean() {
        try {
            java.lang.management.ThreadMXBean b = ManagementFactory.getThreadMXBean();
            if (b instanceof com.sun.management.ThreadMXBean) {
                com.sun.management.ThreadMXBean s = (com.sun.management.ThreadMXBean) b;
                if (s.isThreadAllocatedMemorySupported()) {
                    if (!s.isThreadAllocatedMemoryEnabled()) {
                        s.setThreadAllocatedMemoryEnabled(true);
                    }
                    return s;
                }
            }
        } catch (Throwable t) {
            AgentLog.warn("per-thread allocation counters unavailable; SendPathAllocation is off: " + t);
        }
        return null;
    }

    /** Starts (or reconfigures) the detector when the configuration asks for it; stops it otherwise. */
    public static synchronized void apply(AgentConfig config) {
        if (config == null || !config.detect()) {
            stop();
            return;
        }
        if (running == null) {
            try {
                running = new SpinDetector(config);
            } catch (Throwable t) {
                AgentLog.error("spin detector could not start; continuing without it", t);
            }
        } else {
            running.allocationBudget = config.stateConnections();
            ProfilerCapture old = running.capture;
            running.capture = config.profileOnSpinDir() != null ? new ProfilerCapture(config.profileOnSpinDir(),
                    config.profileDurationNanos(), config.profileEveryNanos()) : null;
            if (old != null) {
                old.close();
            }
        }
    }

    /** Stops the timer thread and any capture in progress. */
    public static synchronized void stop() {
        SpinDetector d = running;
        running = null;
        if (d != null) {
            d.task.cancel();
            d.cpuTask.cancel();
            try {
                // closed connections' last windows and episodes in progress end on the detector's own
                // thread (its state is confined there)
                if (!d.timer.runAndWait(() -> {
                    d.evaluateClosed(System.nanoTime());
                    d.cpu.close("detach");
                    d.streams.close("detach");
                }, 2, TimeUnit.SECONDS)) {
                    AgentLog.debug("CPU spin monitor did not close within 2 s");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            d.timer.close();
            StreamStallMonitor.forgetOpen(); // episodes its thread could not end in time leave no ghost
            ProfilerCapture c = d.capture;
            if (c != null) {
                c.close();
            }
        }
    }

    /**
     * The connection ended (called once by the library's close path, on whatever thread closes it): its
     * last window ends now. Reads the allocation counters of its threads while they still run (a thread
     * that has ended has none) and keeps the telemetry until the detector's next window evaluates it.
     * Never throws; nothing happens when the detector is off.
     */
    public static void connectionClosed(SendTelemetry t, String algorithm) {
        SpinDetector d = running;
        if (d == null || t == null || t.closedAt != 0) {
            return;
        }
        try {
            // a shared loop's allocation is judged per loop, not per connection: nothing to read for it here
            t.senderAllocAtClose = t.ownSenderThread() ? d.allocated(t.senderThreadId) : -1;
            t.receiverAllocAtClose = t.ownSenderThread() ? d.allocated(t.receiverThreadId) : -1;
            t.sampleAtClose();
            t.algorithmAtClose = algorithm != null ? algorithm : "";
            t.closedAt = System.nanoTime();
            d.closed.add(t);
        } catch (Throwable e) {
            AgentLog.warnOnce("detector-close", "spin detector could not close a connection's last window", e);
        }
    }

    /** Detections so far (tests, status), CPU spin episodes included. */
    public static synchronized long detections() {
        return running != null ? running.detections + CpuSpinMonitor.episodes() : 0;
    }

    private void tick() {
        try {
            JfrSwitch.refresh();
            long now = System.nanoTime();
            startWindow();
            evaluateClosed(now);
            List<LiveConnection> live = LiveConnections.live();
            for (LiveConnection a : live) {
                try {
                    evaluate(a.algorithm(), a.telemetry(), now);
                } catch (Throwable t) {
                    AgentLog.warnOnce("detector-eval", "spin detector could not evaluate a connection", t);
                }
            }
            SOURCES.removeIf(ref -> ref.get() == null);
            for (java.lang.ref.WeakReference<TelemetrySource> ref : SOURCES) {
                TelemetrySource source = ref.get();
                if (source == null) {
                    continue;
                }
                source.forEach((algorithm, t) -> {
                    try {
                        evaluate(algorithm, t, now);
                    } catch (Throwable e) {
                        AgentLog.warnOnce("detector-eval-" + t.library(), "spin detector could not evaluate a "
                                + t.library() + " connection", e);
                    }
                });
            }
            loopAllocations(now); // after every connection of this window added its packets
        } catch (Throwable t) {
            AgentLog.warnOnce("detector-tick", "spin detector tick failed", t);
        }
        try {
            streams.tick();
        } catch (Throwable t) {
            AgentLog.warnOnce("stream-stall-tick", "stream stall monitor tick failed", t);
        }
    }

    /**
     * A new window of the allocation events' budget: the cap from the configuration, and one connection in
     * every ceil(connections / cap) of the last window's gets its unflagged event.
     */
    private void startWindow() {
        allocationCap = Math.max(1, allocationBudget);
        evaluatedLastTick = evaluatedThisTick;
        allocationEvery = Math.max(1, (evaluatedLastTick + allocationCap - 1) / allocationCap);
        evaluatedThisTick = 0;
        measuredThisTick = 0;
        windows++;
    }

    /** The last windows of the connections closed since the previous window. */
    private void evaluateClosed(long now) {
        for (SendTelemetry t; (t = closed.poll()) != null; ) {
            try {
                evaluate(t.algorithmAtClose, t, now);
            } catch (Throwable e) {
                AgentLog.warnOnce("detector-eval", "spin detector could not evaluate a connection", e);
            }
        }
    }

    void evaluate(String algorithm, SendTelemetry t, long now) {
        if (t.baseline.finalWindowDone) {
            return;
        }
        long closedAt = t.closedAt;
        boolean last = closedAt != 0;
        if (last) {
            // the window ends at the close, with the allocation counters read then (the threads may be gone)
            t.baseline.finalWindowDone = true;
            now = closedAt;
        }
        // the last window's counts end where it does, at the close (the sender may still turn after it)
        SendTelemetry.CountsAtClose c = last ? t.atClose : null;
        long wakeups = c != null ? c.wakeups : t.wakeups;
        long empty = c != null ? c.empty : t.emptyWakeups;
        long datagrams = c != null ? c.datagrams : t.datagramsSent;
        long inFlight = c != null ? c.inFlight : t.inFlightPackets;
        long inFlightBytes = c != null ? c.inFlightBytes : t.inFlightBytes;
        long refusals = c != null ? c.refusals : t.refusals;
        long past = c != null ? c.past : t.pastSendTimes;
        long received = c != null ? c.received : t.packetsReceived;
        boolean shared = !t.ownSenderThread();
        long senderAlloc = last ? t.senderAllocAtClose : shared ? -1 : allocated(t.senderThreadId);
        long receiverAlloc = last ? t.receiverAllocAtClose : shared ? -1 : allocated(t.receiverThreadId);
        if (t.baseline.time == 0) {
            long start = t.senderStartNanos;
            if (start == 0 || (!last && now - start < WINDOW_NANOS / 2)) {
                return; // the sender has not run yet, or too briefly for a first window: the next one
            }
            // the first window starts with the connection's counters, at the sender's first iteration;
            // a sender thread of its own allocated nothing for anyone else before
            t.baseline.time = start;
            t.baseline.senderAlloc = t.ownSenderThread() ? 0 : -1;
        }
        long window = now - t.baseline.time;
        if (window <= 0) {
            return;
        }
        double seconds = window / 1e9;
        // rates are judged over at least a full window: a short window needs a full window's counts
        double judged = Math.max(seconds, WINDOW_MILLIS / 1e3);
        boolean spinRules = window >= WINDOW_NANOS / 2;
        long dWake = wakeups - t.baseline.wakeups;
        // a loop pass counted as a wake-up at the end of the previous window can end (empty) in this
        // one: never report more empty wake-ups than wake-ups
        long dEmpty = Math.min(dWake, empty - t.baseline.empty);
        long dDatagrams = datagrams - t.baseline.datagrams;
        long dInFlight = inFlight - t.baseline.inFlight;
        long dInFlightBytes = inFlightBytes - t.baseline.inFlightBytes;
        t.baseline.inFlightBytes = inFlightBytes;
        long dRefusals = refusals - t.baseline.refusals;
        long dPast = past - t.baseline.past;
        long dReceived = received - t.baseline.received;
        long dSenderAlloc = senderAlloc >= 0 && t.baseline.senderAlloc >= 0 ? senderAlloc - t.baseline.senderAlloc : -1;
        long dReceiverAlloc = receiverAlloc >= 0 && t.baseline.receiverAlloc >= 0 ? receiverAlloc - t.baseline.receiverAlloc : -1;
        remember(t, now, wakeups, empty, datagrams, inFlight, refusals, past, received, senderAlloc, receiverAlloc);
        LoopAllocation loop = null;
        if (shared && t.senderThreadId != 0) {
            loop = loops.computeIfAbsent(t.senderThreadId, id -> new LoopAllocation(id, t.library()));
            loop.connections++;
        }
        if (dWake == 0 && dDatagrams == 0 && dReceived == 0) {
            return; // idle or closed
        }
        String id = t.connectionId();
        if (AgentLog.enabled(AgentLog.Level.DEBUG)) {
            AgentLog.debug("detector " + id + " " + algorithm + ": wake-ups " + dWake + " (empty " + dEmpty + "), datagrams "
                    + dDatagrams + ", in flight " + dInFlight + " (" + dInFlightBytes + " B), refusals " + dRefusals + ", past " + dPast
                    + ", received " + dReceived + ", alloc sender " + dSenderAlloc + " receiver " + dReceiverAlloc);
        }

        long ackOnly = Math.max(0, dDatagrams - dInFlight);
        double ackOnlyRate = ackOnly / seconds;
        if (spinRules && ackOnly >= ACK_ONLY_MIN && ackOnly / judged >= ACK_ONLY_RATE
                && dInFlightBytes <= ACK_ELICITING_BYTES_MAX && dRefusals > 0) {
            detections++;
            armAlarm(t, "ACK-only send loop");
            if (JfrSwitch.on) {
                AckOnlySendLoop e = new AckOnlySendLoop();
                if (e.shouldCommit()) {
                    e.library = t.library();
                    e.connectionId = id;
                    e.algorithm = algorithm;
                    e.ackOnlyPackets = ackOnly;
                    e.ackElicitingPackets = dInFlight;
                    e.ackElicitingBytes = dInFlightBytes;
                    e.packetsReceived = dReceived;
                    e.refusals = dRefusals;
                    e.ackOnlyRate = ackOnlyRate;
                    e.window = window;
                    e.commit();
                }
            }
            t.baseline.lastLogAck = warnAndProfile(now, t.baseline.lastLogAck, () -> String.format("ACK-only send loop"
                    + " on %s connection %s (%s): %d ACK-only datagrams (%.0f/s), %d ack-eliciting, %d refusals by the"
                    + " controller in %.1f s", t.library(), id, algorithm, ackOnly, ackOnlyRate, dInFlight, dRefusals,
                    seconds), "ACK-only send loop on " + id);
        }

        long unexplained = Math.max(0, dEmpty - dReceived);
        double emptyRate = unexplained / seconds;
        // empty wake-ups beside data moving at the link's rate are the pacer's and the window's own
        // (a healthy 20 Mbit/s transfer at 1% loss: ~550/s unexplained beside ~1,700 data packets/s)
        boolean emptySpin = unexplained / judged >= EMPTY_RATE && unexplained > EMPTY_PER_DATA_PACKET * dInFlight;
        if (spinRules && (dPast / judged >= PAST_RATE || emptySpin)) {
            detections++;
            armAlarm(t, "send-loop spin");
            if (JfrSwitch.on) {
                SendLoopSpin e = new SendLoopSpin();
                if (e.shouldCommit()) {
                    e.library = t.library();
                    e.connectionId = id;
                    e.algorithm = algorithm;
                    e.wakeups = dWake;
                    e.emptyWakeups = dEmpty;
                    e.packetsReceived = dReceived;
                    e.pastSendTimes = dPast;
                    e.emptyWakeupRate = emptyRate;
                    e.window = window;
                    e.commit();
                }
            }
            t.baseline.lastLogSpin = warnAndProfile(now, t.baseline.lastLogSpin, () -> String.format("send-loop spin"
                    + " on %s connection %s (%s): %d wake-ups, %d sent nothing (%.0f/s unexplained by received packets),"
                    + " %d send times in the past in %.1f s", t.library(), id, algorithm, dWake, dEmpty, emptyRate, dPast,
                    seconds), "send-loop spin on " + id);
        }

        evaluatedThisTick++;
        if (t.baseline.allocationSlot < 0) {
            t.baseline.allocationSlot = nextSlot++;
        }
        // an unflagged window is a measurement: written in this connection's turn, while the window's budget
        // lasts, standing for allocationEvery windows; a connection's last window always (closes are not periodic)
        double weight = 0;
        if ((t.baseline.allocationSlot + windows) % allocationEvery == 0 && measuredThisTick < allocationCap) {
            measuredThisTick++;
            weight = allocationEvery;
        } else if (last) {
            weight = 1;
        }
        if (loop != null) {
            loop.packets += dDatagrams + dReceived; // the loop's allocation is judged once, for all of them
            return;
        }
        allocation(t, id, "sender", t.senderThreadId, dSenderAlloc, dDatagrams, window, judged, now, weight);
        allocation(t, id, "receiver", t.receiverThreadId, dReceiverAlloc, dReceived, window, judged, now, weight);
    }

    /**
     * Each shared thread's allocation over its last window, once per loop: one {@code SendPathAllocation}
     * (path "event loop", no connection) when its QUIC connections moved packets or it allocated at the storm
     * rate, flagged on the rate alone. A loop that served no evaluated connection for a minute is dropped.
     */
    private void loopAllocations(long now) {
        for (java.util.Iterator<LoopAllocation> it = loops.values().iterator(); it.hasNext(); ) {
            LoopAllocation l = it.next();
            long alloc = allocated(l.threadId);
            if (alloc < 0 || l.quietWindows > 60) {
                it.remove(); // the thread ended, or no connection of ours is on it any more
                continue;
            }
            if (l.startAlloc >= 0 && now - l.startNanos >= WINDOW_NANOS / 2) {
                long window = now - l.startNanos;
                long allocated = Math.max(0, alloc - l.startAlloc);
                double judged = Math.max(window / 1e9, WINDOW_MILLIS / 1e3);
                boolean flagged = allocated / judged > ALLOC_RATE_FLAG;
                long rate = (long) (allocated / (window / 1e9));
                boolean record = JfrSwitch.on && (l.packets > 0 || flagged);
                String name = record || flagged ? threadName(l.threadId) : "";
                if (record) {
                    SendPathAllocation e = new SendPathAllocation();
                    if (e.shouldCommit()) {
                        e.library = l.library;
                        e.connectionId = "";
                        e.path = "event loop";
                        e.loopConnectionCount = l.connections;
                        e.threadName = name;
                        e.allocated = allocated;
                        e.packets = l.packets;
                        e.bytesPerPacket = allocated / Math.max(1, l.packets);
                        e.allocationRate = rate;
                        e.flagged = flagged;
                        e.threshold = ALLOC_PER_PACKET_FLAG;
                        e.window = window;
                        e.weight = 1;
                        e.commit();
                    }
                }
                if (flagged) {
                    detections++;
                    long packets = l.packets;
                    int connections = l.connections;
                    l.lastLog = warnAndProfile(now, l.lastLog, () -> String.format("allocation storm on %s event loop \"%s\": "
                            + "%d MB/s, while its %d QUIC connections moved %d packets (the loop serves other work too)",
                            l.library, name, rate >> 20, connections, packets), "allocation storm on event loop " + name);
                }
                l.quietWindows = l.connections == 0 ? l.quietWindows + 1 : 0;
            }
            if (l.startAlloc < 0 || now - l.startNanos >= WINDOW_NANOS / 2) {
                l.startAlloc = alloc;
                l.startNanos = now;
                l.packets = 0;
                l.connections = 0;
            }
        }
    }

    /** Counts an alarm on the connection's arm: information only (a client can cause these patterns; see Guard). */
    private static void armAlarm(SendTelemetry t, String what) {
        dev.ccagent.agent.measure.ArmStats arm = t.arm;
        if (arm != null) {
            arm.alarm(what);
        }
    }

    private void allocation(SendTelemetry t, String id, String path, long threadId, long allocated, long packets,
                            long window, double judged, long now, double measuredWeight) {
        if (allocated < 0 || threadId == 0) {
            return;
        }
        long perPacket = allocated / Math.max(1, packets);
        long rate = (long) (allocated / (window / 1e9));
        // kwik's handshake allocates ~130 KiB per packet at ~1 MB/s; its bulk sender ~17 KiB per datagram
        // at ~40 MB/s (measured). The seed bug allocated 8 GB in 15 s (~530 MB/s).
        double judgedRate = allocated / judged;
        boolean flagged = judgedRate > ALLOC_RATE_FLAG || (perPacket > ALLOC_PER_PACKET_FLAG && judgedRate > ALLOC_RATE_MIN);
        if (JfrSwitch.on && (packets > 0 || allocated > 0) && (flagged || measuredWeight > 0)) {
            SendPathAllocation e = new SendPathAllocation();
            if (e.shouldCommit()) {
                e.library = t.library();
                e.connectionId = id;
                e.path = path;
                e.threadName = threadName(threadId);
                e.allocated = allocated;
                e.packets = packets;
                e.bytesPerPacket = perPacket;
                e.allocationRate = rate;
                e.flagged = flagged;
                e.threshold = ALLOC_PER_PACKET_FLAG;
                e.window = window;
                e.weight = flagged ? 1 : measuredWeight;
                e.commit();
            }
        }
        if (flagged) {
            detections++;
            t.baseline.lastLogAlloc = warnAndProfile(now, t.baseline.lastLogAlloc, () -> String.format("allocation storm"
                    + " on the %s thread of %s connection %s: %d B per packet, %d MB/s", path, t.library(), id, perPacket,
                    rate >> 20), "allocation storm on " + id);
        }
    }

    /**
     * A detection's warning, at most one a minute per connection and kind ({@code lastLog}: when the kind
     * was last logged, 0 for never), and its profile capture; returns when the kind was last logged now.
     */
    private long warnAndProfile(long now, long lastLog, Supplier<String> warning, String reason) {
        long logged = lastLog;
        if (now - lastLog > LOG_EVERY_NANOS || lastLog == 0) {
            logged = now;
            AgentLog.warn(warning.get());
        }
        profile(reason);
        return logged;
    }

    private String threadName(long id) {
        try {
            java.lang.management.ThreadInfo info = threads != null ? threads.getThreadInfo(id) : null;
            return info != null ? info.getThreadName() : "";
        } catch (RuntimeException e) {
            return "";
        }
    }

    private long allocated(long threadId) {
        if (threads == null || threadId == 0) {
            return -1;
        }
        try {
            return threads.getThreadAllocatedBytes(threadId);
        } catch (RuntimeException e) {
            return -1;
        }
    }

    private static void remember(SendTelemetry t, long now, long wakeups, long empty, long datagrams, long inFlight,
                                 long refusals, long past, long received, long senderAlloc, long receiverAlloc) {
        t.baseline.time = now;
        t.baseline.wakeups = wakeups;
        t.baseline.empty = empty;
        t.baseline.datagrams = datagrams;
        t.baseline.inFlight = inFlight;
        t.baseline.refusals = refusals;
        t.baseline.past = past;
        t.baseline.received = received;
        t.baseline.senderAlloc = senderAlloc;
        t.baseline.receiverAlloc = receiverAlloc;
    }

    private void profile(String reason) {
        ProfilerCapture c = capture;
        if (c != null) {
            c.trigger(reason);
        }
    }
}
