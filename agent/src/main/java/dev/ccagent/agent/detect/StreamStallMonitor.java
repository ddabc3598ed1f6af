package dev.ccagent.agent.detect;

import dev.ccagent.agent.log.AgentLog;
import dev.ccagent.agent.runtime.AgentRuntime;
import dev.ccagent.jfr.JfrSwitch;
import dev.ccagent.jfr.StreamStall;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * Streams that stopped sending with nobody left to restart them. Once per detector window (1 s, on the
 * detector's thread) each library source reports its streams; a source marks a stream
 * {@link Reading#stalled} when, at that sample, it held data to send, no send request was queued for it,
 * its connection had nothing ack-eliciting in flight (so the library's loss timer is not armed: no probe,
 * no retransmission will come) and flow control did not block it. Such a stream can only be moved on by
 * an application write, a flow-control update or the idle timeout.
 *
 * <p>An episode starts when a stream stays stalled, with the same offset and buffered byte count, for
 * {@link #threshold} = max({@value #PTO_MULTIPLE} × PTO, 1 s): by {@value #PTO_MULTIPLE} PTOs the library
 * would have probed twice (after 1 PTO, then after a doubled one) had anything been outstanding, which is
 * also RFC 9002's persistent-congestion span, so no loss-recovery pause lasts that long; the 1 s floor is
 * the sampling period (two samples one window apart confirm the stall), and is 10-100 times any
 * scheduling pause that could hold a healthy stream in this state for a few instructions. It ends when
 * the stream moves, gets a send request or data in flight ({@code progress}), when the stream or its
 * connection is gone ({@code close}), or when the detector stops ({@code detach}).
 *
 * <p>Per episode: one WARN line and one status alarm at its start and at its end, and
 * {@code dev.ccagent.StreamStall} JFR events as {@link CpuSpinMonitor} commits its own: one at detection,
 * one every {@link #REPORT_EVERY_NANOS} while it lasts, one at its end, one per open episode when a chunk
 * ends. No event object exists unless a recording is on. Names no library: sources register themselves.
 */
public final class StreamStallMonitor {

    /** The threshold's multiple of the connection's PTO. */
    static final int PTO_MULTIPLE = 3;
    /** The threshold's floor: the sampling period. */
    static final long FLOOR_NANOS = SpinDetector.WINDOW_MILLIS * 1_000_000L;
    /** An open episode is committed again this often. */
    static final long REPORT_EVERY_NANOS = 5_000_000_000L;

    private static final java.util.concurrent.atomic.AtomicLong EPISODE_IDS = new java.util.concurrent.atomic.AtomicLong();
    /** Open episodes, for readers off the detector's thread (the chunk-end hook, status). */
    private static final Map<Long, Episode> OPEN = new java.util.concurrent.ConcurrentHashMap<>();
    private static boolean chunkHookRegistered;
    private static volatile StreamStallMonitor current;

    /** One stream as a source sees it at one sample (reused by the source: copy what you keep). */
    public static final class Reading {
        /** The stream's identity (stable across samples). */
        public Object key;
        /** Data to send, no send request queued, nothing in flight on its connection, not flow-control blocked. */
        public boolean stalled;
        public String library = "";
        public String connectionId = "";
        public long streamId = -1;
        public long bytesWaiting;
        public boolean retransmitPending;
        public long offset;
        public boolean writerBlocked;
        public boolean fixOn;
        /** The connection's PTO; 0 when not known (the floor applies). */
        public long ptoNanos;

        /** Back to "not stalled", for the next stream. */
        public void clear() {
            key = null;
            stalled = false;
            library = "";
            connectionId = "";
            streamId = -1;
            bytesWaiting = 0;
            retransmitPending = false;
            offset = 0;
            writerBlocked = false;
            fixOn = false;
            ptoNanos = 0;
        }
    }

    /** A library module's streams. */
    public interface Source {
        /** Calls {@code sink} once per stream of every live connection (the stream gone: not called). */
        void forEach(Consumer<Reading> sink);
    }

    private static final List<java.lang.ref.WeakReference<Source>> SOURCES = new CopyOnWriteArrayList<>();

    /**
     * Adds a module's streams to every sample. Held weakly: the module keeps the source in a static
     * field, so a source defined in an application's loader never pins that loader.
     */
    public static void addSource(Source source) {
        SOURCES.add(new java.lang.ref.WeakReference<>(source));
    }

    /** A stream seen stalled, since {@link #firstNanos} with these figures. */
    private static final class Track {
        final long firstNanos;
        final long offset;
        final long bytes;
        long seen;
        Episode episode;
        /** Begun at {@link #firstNanos} when a recording was on: the episode's first event. */
        StreamStall first;

        Track(long firstNanos, Reading r) {
            this.firstNanos = firstNanos;
            this.offset = r.offset;
            this.bytes = r.bytesWaiting;
        }
    }

    /** The latest sample's figures (immutable: read off the detector's thread). */
    private static final class Figures {
        final long atNanos;
        final long bytesWaiting;
        final long offset;
        final boolean retransmitPending;
        final boolean writerBlocked;
        final long ptoNanos;

        Figures(long atNanos, Reading r) {
            this.atNanos = atNanos;
            this.bytesWaiting = r.bytesWaiting;
            this.offset = r.offset;
            this.retransmitPending = r.retransmitPending;
            this.writerBlocked = r.writerBlocked;
            this.ptoNanos = r.ptoNanos;
        }

        Figures(long atNanos, Figures f) {
            this.atNanos = atNanos;
            this.bytesWaiting = f.bytesWaiting;
            this.offset = f.offset;
            this.retransmitPending = f.retransmitPending;
            this.writerBlocked = f.writerBlocked;
            this.ptoNanos = f.ptoNanos;
        }
    }

    private static final class Episode {
        final long id = EPISODE_IDS.incrementAndGet();
        String library;
        String connectionId;
        long streamId;
        boolean fixOn;
        long startNanos;
        long detectedAfter;
        long lastCommitNanos;
        volatile Figures figures;
        /** Begun at the last commit: the next event covers the time since. */
        StreamStall event;
    }

    private final Map<Object, Track> tracks = new IdentityHashMap<>();
    private final Consumer<Reading> sink = this::accept;
    private long tick;
    private long now;
    private volatile long episodes;
    private volatile long ongoing;

    StreamStallMonitor() {
        current = this;
        registerChunkHook();
    }

    private static synchronized void registerChunkHook() {
        if (chunkHookRegistered) {
            return;
        }
        chunkHookRegistered = true;
        JfrSwitch.whenRecorderInitialized(() -> jdk.jfr.FlightRecorder.addPeriodicEvent(StreamStall.class,
                new dev.ccagent.agent.runtime.OpaqueRunnable(StreamStallMonitor::commitOpenEpisodes)));
    }

    /** The chunk-end hook (JFR's thread): each open episode as of its latest sample, {@code endedBy = ongoing}. */
    static void commitOpenEpisodes() {
        for (Episode e : OPEN.values()) {
            Figures f = e.figures;
            if (f != null) {
                StreamStall ev = new StreamStall();
                if (ev.shouldCommit()) {
                    fill(ev, e, f, "ongoing");
                    ev.commit();
                }
            }
        }
    }

    /** The stall threshold for a connection whose PTO is {@code ptoNanos} (0: unknown). */
    static long threshold(long ptoNanos) {
        return Math.max(PTO_MULTIPLE * Math.max(0, ptoNanos), FLOOR_NANOS);
    }

    /** Stall episodes started since the detector started (status, the MXBean, Prometheus). */
    public static long episodes() {
        StreamStallMonitor m = current;
        return m != null ? m.episodes : 0;
    }

    /** Episodes in progress now. */
    public static long ongoing() {
        StreamStallMonitor m = current;
        return m != null ? m.ongoing : 0;
    }

    /** Open episodes as {@code status} lines. */
    public static List<String> openEpisodes() {
        List<String> lines = new ArrayList<>();
        long t = System.nanoTime();
        for (Episode e : OPEN.values()) {
            Figures f = e.figures;
            if (f != null) {
                lines.add(String.format(Locale.ROOT, "stream stall on %s connection %s stream %d: ongoing for %.1f s,"
                                + " %d B waiting at offset %d%s; fix.kwik-stream-stall %s", e.library, e.connectionId,
                        e.streamId, (t - e.startNanos) / 1e9, f.bytesWaiting, f.offset,
                        f.writerBlocked ? ", a writer blocked" : "", e.fixOn ? "on" : "off"));
            }
        }
        return lines;
    }

    /** One sample (detector thread). */
    void tick() {
        tick(System.nanoTime());
    }

    /** One sample at {@code now} (tests drive the clock). */
    void tick(long now) {
        tick++;
        this.now = now;
        SOURCES.removeIf(ref -> ref.get() == null);
        for (java.lang.ref.WeakReference<Source> ref : SOURCES) {
            Source s = ref.get();
            if (s == null) {
                continue;
            }
            try {
                s.forEach(sink);
            } catch (Throwable t) {
                AgentLog.warnOnce("stream-stall-source", "stream stall monitor could not read a library's streams", t);
            }
        }
        for (Iterator<Track> it = tracks.values().iterator(); it.hasNext(); ) {
            Track t = it.next();
            if (t.seen != tick) { // the stream or its connection is gone
                if (t.episode != null) {
                    end(t.episode, now, "close");
                }
                it.remove();
            }
        }
    }

    private void accept(Reading r) {
        if (r.key == null) {
            return;
        }
        Track t = tracks.get(r.key);
        if (!r.stalled) {
            if (t != null) {
                if (t.episode != null) {
                    end(t.episode, now, "progress");
                }
                tracks.remove(r.key);
            }
            return;
        }
        if (t != null && (t.offset != r.offset || t.bytes != r.bytesWaiting)) {
            if (t.episode != null) {
                end(t.episode, now, "progress"); // it moved, and stopped again: a new clock
            }
            t = null;
        }
        if (t == null) {
            t = new Track(now, r);
            if (JfrSwitch.on) {
                StreamStall first = new StreamStall();
                if (first.isEnabled()) {
                    first.begin();
                    t.first = first;
                }
            }
            tracks.put(r.key, t);
        }
        t.seen = tick;
        Episode e = t.episode;
        if (e == null) {
            long threshold = threshold(r.ptoNanos);
            if (now - t.firstNanos >= threshold) {
                start(t, r, threshold);
            }
            return;
        }
        e.figures = new Figures(now, r);
        if (now - e.lastCommitNanos >= REPORT_EVERY_NANOS) {
            commit(e, e.figures, "ongoing");
        }
    }

    private void start(Track t, Reading r, long threshold) {
        Episode e = new Episode();
        e.library = r.library;
        e.connectionId = r.connectionId;
        e.streamId = r.streamId;
        e.fixOn = r.fixOn;
        e.startNanos = t.firstNanos;
        e.detectedAfter = threshold;
        e.figures = new Figures(now, r);
        e.event = t.first;
        t.first = null;
        t.episode = e;
        episodes++;
        ongoing++;
        OPEN.put(e.id, e);
        commit(e, e.figures, "ongoing");
        String line = String.format(Locale.ROOT, "stream stall on %s connection %s stream %d: %d B waiting at offset %d%s"
                        + "%s, no send request queued, nothing in flight, not blocked by flow control, for %.1f s"
                        + " (threshold max(%d x PTO %.0f ms, 1 s)); fix.kwik-stream-stall is %s", e.library,
                e.connectionId, e.streamId, r.bytesWaiting, r.offset, r.retransmitPending ? " and lost data to resend" : "",
                r.writerBlocked ? ", its writer blocked on a full buffer" : "", (now - e.startNanos) / 1e9, PTO_MULTIPLE,
                r.ptoNanos / 1e6, e.fixOn ? "on (this is not the race it closes)" : "off");
        AgentLog.warn(line);
        AgentRuntime.recordAlarm(line);
    }

    private void end(Episode e, long at, String endedBy) {
        ongoing--;
        OPEN.remove(e.id);
        Figures last = e.figures;
        Figures f = new Figures(at, last);
        String line = String.format(Locale.ROOT, "stream stall on %s connection %s stream %d ended (%s) after %.1f s",
                e.library, e.connectionId, e.streamId, endedBy, (at - e.startNanos) / 1e9);
        AgentLog.warn(line);
        AgentRuntime.recordAlarm(line);
        commit(e, f, endedBy);
    }

    /** One event of the episode: the time since its previous one (detector thread). */
    private static void commit(Episode e, Figures f, String endedBy) {
        e.lastCommitNanos = f.atNanos;
        StreamStall ev = e.event;
        e.event = null;
        if (!JfrSwitch.on) {
            return;
        }
        if (ev == null) {
            ev = new StreamStall(); // the first event since a recording started: from now
            ev.begin();
        }
        ev.end();
        if (ev.shouldCommit()) {
            fill(ev, e, f, endedBy);
            ev.commit();
        }
        if (!"ongoing".equals(endedBy)) {
            return;
        }
        StreamStall next = new StreamStall();
        if (next.isEnabled()) {
            next.begin();
            e.event = next;
        }
    }

    private static void fill(StreamStall ev, Episode e, Figures f, String endedBy) {
        ev.episodeId = e.id;
        ev.episodeDuration = f.atNanos - e.startNanos;
        ev.library = e.library;
        ev.connectionId = e.connectionId;
        ev.streamId = e.streamId;
        ev.bytesWaiting = f.bytesWaiting;
        ev.retransmitPending = f.retransmitPending;
        ev.streamOffset = f.offset;
        ev.writerBlocked = f.writerBlocked;
        ev.fixOn = e.fixOn;
        ev.pto = f.ptoNanos;
        ev.detectedAfter = e.detectedAfter;
        ev.endedBy = endedBy;
    }

    /** Ends every episode in progress (detector stopping: detach or reconfiguration). */
    void close(String endedBy) {
        long at = System.nanoTime();
        for (Track t : tracks.values()) {
            if (t.episode != null) {
                end(t.episode, at, endedBy);
            }
        }
        tracks.clear();
        if (current == this) {
            current = null;
        }
    }
}
