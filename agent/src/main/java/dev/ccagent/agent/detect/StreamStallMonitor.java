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
 * the stream moves, gets a send request or has nothing left to send ({@code progress}), when the stream is
 * reset or it or its connection is gone ({@code close}), or when the detector stops ({@code detach}).
 * Traffic of other streams, or a flow-control block, while its figures stay put does not end it (the
 * source marks such a sample {@link Reading#hidden}); nor can such a sample start one: the clock restarts.
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
    /** Episodes since the agent started (a counter across detector restarts), and those open now. */
    private static final java.util.concurrent.atomic.AtomicLong EPISODES = new java.util.concurrent.atomic.AtomicLong();
    private static final java.util.concurrent.atomic.AtomicLong ONGOING = new java.util.concurrent.atomic.AtomicLong();

    /** One stream as a source sees it at one sample (reused by the source: copy what you keep). */
    public static final class Reading {
        /** The stream's identity (stable across samples). */
        public Object key;
        /** Data to send, no send request queued, nothing in flight on its connection, not flow-control blocked. */
        public boolean stalled;
        /**
         * Data to send and no send request queued, but something else is in flight on its connection or flow
         * control holds it: not a stall by itself, yet an open episode whose figures have not moved goes on
         * (another stream's traffic does not restart this one).
         */
        public boolean hidden;
        /** The stream was reset or aborted: an open episode ends as {@code close}. */
        public boolean closed;
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
            hidden = false;
            closed = false;
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

    private static final WeakSources<Source> SOURCES = new WeakSources<>("stream-stall-source",
            "stream stall monitor could not read a library's streams");

    /** Adds a module's streams to every sample, held weakly ({@link WeakSources}). */
    public static void addSource(Source source) {
        SOURCES.add(source);
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
    }

    private static final class Episode {
        final long id = EPISODE_IDS.incrementAndGet();
        final String library;
        final String connectionId;
        final long streamId;
        final boolean fixOn;
        final long startNanos;
        final long detectedAfter;
        long lastCommitNanos;
        volatile Figures figures;
        /** Set before anything else at its end: ends once, and the chunk-end hook skips it from then on. */
        volatile boolean ended;
        /** Begun at the last commit: the next event covers the time since. */
        StreamStall event;

        /** A stream's episode, stalled since {@code startNanos}, detected past {@code detectedAfter}. */
        Episode(Reading r, long startNanos, long detectedAfter) {
            library = r.library;
            connectionId = r.connectionId;
            streamId = r.streamId;
            fixOn = r.fixOn;
            this.startNanos = startNanos;
            this.detectedAfter = detectedAfter;
        }
    }

    /**
     * Keyed by the stream itself, only while it is stuck (a live connection's stream, which the library holds
     * anyway); dropped at the first sample that does not see it, and with this monitor when the detector
     * stops, so no application loader outlives its connections here.
     */
    private final Map<Object, Track> tracks = new IdentityHashMap<>();
    private final Consumer<Reading> sink = this::accept;
    private final Consumer<Source> readSource = s -> s.forEach(sink);
    private long tick;
    private long now;

    StreamStallMonitor() {
        EpisodeEvents.atChunkEnd(StreamStall.class, StreamStallMonitor::commitOpenEpisodes);
    }

    /** The chunk-end hook (JFR's thread): each open episode as of its latest sample, {@code endedBy = ongoing}. */
    static void commitOpenEpisodes() {
        for (Episode e : OPEN.values()) {
            Figures f = e.figures;
            if (f != null && !e.ended) {
                StreamStall ev = new StreamStall();
                if (ev.shouldCommit()) {
                    fill(ev, e, f, f.atNanos, "ongoing");
                    ev.commit();
                }
            }
        }
    }

    /** The stall threshold for a connection whose PTO is {@code ptoNanos} (0: unknown). */
    static long threshold(long ptoNanos) {
        return Math.max(PTO_MULTIPLE * Math.max(0, ptoNanos), FLOOR_NANOS);
    }

    /** Stall episodes started since the agent started (status, the MXBean, Prometheus). */
    public static long episodes() {
        return EPISODES.get();
    }

    /** Episodes in progress now. */
    public static long ongoing() {
        return ONGOING.get();
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
        SOURCES.readEach(readSource);
        for (Iterator<Track> it = tracks.values().iterator(); it.hasNext(); ) {
            Track t = it.next();
            if (t.seen != tick) { // the stream or its connection is gone
                it.remove();
                if (t.episode != null) {
                    end(t, now, "close");
                }
            }
        }
    }

    private void accept(Reading r) {
        try {
            sample(r);
        } catch (Throwable t) { // one stream's trouble is not every stream's: keep its track as it was
            Track track = r.key != null ? tracks.get(r.key) : null;
            if (track != null) {
                track.seen = tick;
            }
            AgentLog.warnOnce("stream-stall-sample", "stream stall monitor could not judge a stream", t);
        }
    }

    private void sample(Reading r) {
        if (r.key == null) {
            return;
        }
        Track t = tracks.get(r.key);
        boolean same = t != null && t.offset == r.offset && t.bytes == r.bytesWaiting;
        if (!r.stalled) {
            if (t == null) {
                return;
            }
            if (r.hidden && same && t.episode != null) { // still stuck where it stopped: the episode goes on
                t.seen = tick;
                report(t.episode, r);
                return;
            }
            tracks.remove(r.key); // moved, queued, nothing left to send, or reset: a later stall starts anew
            if (t.episode != null) {
                end(t, now, r.closed ? "close" : "progress");
            }
            return;
        }
        if (t != null && !same) {
            tracks.remove(r.key);
            if (t.episode != null) {
                end(t, now, "progress"); // it moved, and stopped again: a new clock
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
        if (t.episode == null) {
            long threshold = threshold(r.ptoNanos);
            if (now - t.firstNanos >= threshold) {
                start(t, r, threshold);
            }
            return;
        }
        report(t.episode, r);
    }

    /** An open episode at a sample: its figures for readers off this thread, its periodic event. */
    private void report(Episode e, Reading r) {
        e.figures = new Figures(now, r);
        if (now - e.lastCommitNanos >= REPORT_EVERY_NANOS) {
            commit(e, e.figures, now, "ongoing");
        }
    }

    private void start(Track t, Reading r, long threshold) {
        Episode e = new Episode(r, t.firstNanos, threshold);
        e.figures = new Figures(now, r);
        e.event = t.first;
        t.first = null;
        t.episode = e;
        EPISODES.incrementAndGet();
        ONGOING.incrementAndGet();
        OPEN.put(e.id, e);
        commit(e, e.figures, now, "ongoing");
        String line = String.format(Locale.ROOT, "stream stall on %s connection %s stream %d: %d B waiting at offset %d%s"
                        + "%s, no send request queued, nothing in flight, not blocked by flow control, for %.1f s"
                        + " (threshold max(%d x PTO %.0f ms, 1 s)); fix.kwik-stream-stall is %s", e.library,
                e.connectionId, e.streamId, r.bytesWaiting, r.offset, r.retransmitPending ? " and lost data to resend" : "",
                r.writerBlocked ? ", its writer blocked on a full buffer" : "", (now - e.startNanos) / 1e9, PTO_MULTIPLE,
                r.ptoNanos / 1e6, e.fixOn ? "on (this is not the race it closes)" : "off");
        AgentLog.warn(line);
        AgentRuntime.recordAlarm(line);
    }

    private void end(Track t, long at, String endedBy) {
        Episode e = t.episode;
        t.episode = null; // before anything that could throw: an episode ends once
        if (e == null || e.ended) {
            return;
        }
        e.ended = true;
        OPEN.remove(e.id);
        ONGOING.decrementAndGet();
        String line = String.format(Locale.ROOT, "stream stall on %s connection %s stream %d ended (%s) after %.1f s",
                e.library, e.connectionId, e.streamId, endedBy, (at - e.startNanos) / 1e9);
        AgentLog.warn(line);
        AgentRuntime.recordAlarm(line);
        commit(e, e.figures, at, endedBy);
    }

    /** One event of the episode, its latest figures as of {@code at}: the time since its previous one (detector thread). */
    private static void commit(Episode e, Figures f, long at, String endedBy) {
        e.lastCommitNanos = at;
        e.event = EpisodeEvents.commit(e.event, StreamStall::new, ev -> fill(ev, e, f, at, endedBy), "ongoing".equals(endedBy));
    }

    private static void fill(StreamStall ev, Episode e, Figures f, long at, String endedBy) {
        ev.episodeId = e.id;
        ev.episodeDuration = at - e.startNanos;
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

    /** Ends every episode in progress (detector stopping: detach or reconfiguration), on the detector's thread. */
    void close(String endedBy) {
        long at = System.nanoTime();
        for (Track t : tracks.values()) {
            if (t.episode != null) {
                end(t, at, endedBy);
            }
        }
        tracks.clear();
    }

    /**
     * After the detector stopped (its thread is gone): episodes its last {@link #close} could not end (the
     * thread did not answer in time) leave no ghost in {@code status} or in later recordings.
     */
    static void forgetOpen() {
        for (Episode e : OPEN.values()) {
            e.ended = true;
        }
        OPEN.clear();
        ONGOING.set(0);
    }
}
