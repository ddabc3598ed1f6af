package dev.ccagent.agent.measure;

import dev.ccagent.cc.RttEstimator;
import dev.ccagent.jfr.ConnectionSummary;
import dev.ccagent.jfr.JfrSwitch;

/**
 * Measures one connection the same way whatever controls it (our algorithms, the library's own
 * controller, a fallback): the library module feeds it every packet registered in flight, every
 * acknowledged, lost and discarded packet and every ACK frame's receive time, before the controller
 * sees them. Stack-neutral: times are {@link System#nanoTime()} nanoseconds, converted by the module.
 *
 * <ul>
 *   <li>bytes and packets sent (registered in flight: ack-eliciting), acknowledged, lost;</li>
 *   <li>RTT: one sample per ACK frame whose largest acknowledged packet is newly acknowledged, from
 *       the frame's receive time, fed to an RFC 9002 {@link RttEstimator} (min, smoothed) and to a
 *       log-bucket {@link RttHistogram} (p50, p95);</li>
 *   <li>application-limited time: time with nothing in flight between the first packet and the
 *       last, i.e. the sender had nothing to send although any window allows a packet then;</li>
 *   <li>left slow start: a loss was declared (every loss-based controller leaves slow start on its
 *       first congestion event), or the owner's controller says it left slow start / STARTUP.</li>
 * </ul>
 *
 * <p>O(1) per packet and per ACK, no allocation; one monitor per call (uncontended: each library
 * calls from its sender and receiver threads). Summaries ({@link #summary}) are written from the
 * closing thread and the {@link Summaries} ticker.
 */
public final class ConnectionMeter {

    /** What the library module knows about the connection, asked only when a summary is written. */
    public interface Owner {
        String connectionId();

        String role();

        /** Algorithm in charge now; {@code stock} for the library's own controller. */
        String algorithm();

        /** {@code ccagent}, {@code stock}, {@code fallback} or {@code application's setting}. */
        String controller();

        /**
         * Where the controller in charge stands: its own mode when it reports one (ours); {@link
         * SlowStart#UNKNOWN} when it does not (kwik's own controller, quiche's), judged then by the first
         * loss, which ends slow start in every loss-based controller.
         */
        SlowStart controllerSlowStart();
    }

    /** Whether a controller has left slow start / STARTUP, as it reports it. */
    public enum SlowStart { IN, LEFT, UNKNOWN }

    static final long MAX_ACK_DELAY_NANOS = 25_000_000L;

    private final String library;
    private final Owner owner;
    private final long start;
    private final RttEstimator rtt = new RttEstimator(333_000_000L);
    private final RttHistogram histogram = new RttHistogram();
    private volatile ArmStats arm;
    private String armLabel = "";

    private long bytesSent;
    private long bytesAcked;
    private long bytesLost;
    private long packetsSent;
    private long packetsLost;
    private long inFlight;
    private long idleSince = -1;
    private long appLimited;
    /** First application-data packet sent, last acknowledgement received. */
    private long firstDataSent = -1;
    private long lastAcked = -1;
    private long lastActivity;
    private boolean lossSeen;
    private long sequence;
    private boolean closed;
    /** Time of the last summary written (periodic ones are spaced by the period). */
    long lastSummary;

    // the ACK frame being processed
    private long ackTime;
    private long ackDelay;
    private long largestAcked = -1;
    private long largestSent = Long.MIN_VALUE;
    private long ackedNow;

    public ConnectionMeter(String library, Owner owner) {
        this.library = library;
        this.owner = owner;
        this.start = System.nanoTime();
        this.lastSummary = start;
        this.lastActivity = start;
    }

    /**
     * Puts the meter in the table of live connections (periodic summaries, detach): only once the
     * library module has really taken the connection over. The table holds it strongly until
     * {@link #close}, so a meter of a connection that stayed stock (a failed swap) must never be in it.
     */
    public void register() {
        Summaries.register(this);
    }

    /** Binds the connection to its arm (once; later calls are ignored). */
    public synchronized void bind(String library, String armLabel, String algorithm) {
        if (arm != null || closed) {
            return; // bound already, or closed out (a detach): no arm counts it as open any more
        }
        this.armLabel = armLabel;
        ArmStats a = ArmStats.of(library, armLabel, algorithm);
        a.connections.increment();
        a.open.increment();
        // what the connection did before its arm was known (a client learns its id late); under this
        // monitor, so no update is counted twice
        a.bytesSent.add(bytesSent);
        a.packetsSent.add(packetsSent);
        a.bytesAcked.add(bytesAcked);
        a.bytesLost.add(bytesLost);
        a.packetsLost.add(packetsLost);
        arm = a;
    }

    public boolean bound() {
        return arm != null;
    }

    /** The arm's aggregates, null until bound. */
    public ArmStats arm() {
        return arm;
    }

    // ---------------------------------------------------------------- per packet / per ACK (no allocation)

    public synchronized void sent(long now, int bytes) {
        sent(now, bytes, true);
    }

    /** {@code applicationData}: a 1-RTT packet (the transfer time starts with the first one). */
    public synchronized void sent(long now, int bytes, boolean applicationData) {
        if (closed) {
            return;
        }
        if (inFlight == 0 && idleSince >= 0) {
            appLimited += Math.max(0, now - idleSince);
            idleSince = -1;
        }
        if (applicationData && firstDataSent < 0) {
            firstDataSent = now;
        }
        bytesSent += bytes;
        packetsSent++;
        inFlight += bytes;
        lastActivity = now;
        ArmStats a = arm;
        if (a != null) {
            a.sent(bytes);
        }
    }

    /** An ACK frame received at {@code receiveTime} is about to be processed. */
    public synchronized void ackFrame(long receiveTime, long largestAcknowledged, long ackDelayNanos) {
        ackTime = receiveTime;
        largestAcked = largestAcknowledged;
        ackDelay = Math.max(0, ackDelayNanos);
        largestSent = Long.MIN_VALUE;
        ackedNow = 0;
    }

    /** One newly acknowledged packet of the current ACK frame (call {@link #ackDone} after the last). */
    public synchronized void acked(long packetNumber, long sentTime, int bytes) {
        if (closed) {
            return;
        }
        bytesAcked += bytes;
        ackedNow += bytes;
        inFlight = Math.max(0, inFlight - bytes);
        if (packetNumber == largestAcked) {
            largestSent = sentTime;
        }
    }

    /** The current ACK frame's newly acknowledged packets are all reported. */
    public synchronized void ackDone(long now) {
        if (closed) {
            return;
        }
        long at = ackTime != 0 ? Math.min(ackTime, now) : now;
        ArmStats a = arm;
        if (largestSent != Long.MIN_VALUE) {
            long sample = Math.max(1, at - Math.min(at, largestSent));
            rtt.onSample(sample, Math.min(ackDelay, MAX_ACK_DELAY_NANOS));
            histogram.record(sample);
            if (a != null) {
                a.rttSample(sample);
            }
        }
        if (a != null && ackedNow > 0) {
            a.acked(ackedNow);
        }
        if (ackedNow > 0) {
            lastAcked = at;
            if (inFlight == 0 && idleSince < 0) {
                idleSince = at;
            }
        }
        lastActivity = now;
        ackTime = 0;
        largestAcked = -1;
        largestSent = Long.MIN_VALUE;
        ackedNow = 0;
    }

    public synchronized void lost(int bytes) {
        if (closed) {
            return;
        }
        bytesLost += bytes;
        packetsLost++;
        lossSeen = true;
        inFlight = Math.max(0, inFlight - bytes);
        ArmStats a = arm;
        if (a != null) {
            a.lost(bytes);
        }
    }

    /**
     * A library that keeps its own counters (quiche inside Netty QUIC): its cumulative figures at one
     * stats sample, and the RTT it reports then (one histogram sample per call). Acknowledged bytes are
     * sent minus lost (quiche's path stats have no acknowledged count). The arm gets the increments.
     */
    public synchronized void sampled(long now, long sentBytes, long lostBytes, long sentPackets, long lostPackets,
                                     long rttNanos) {
        if (closed) {
            return;
        }
        long ackedBytes = Math.max(0, sentBytes - lostBytes);
        ArmStats a = arm;
        if (a != null) {
            a.bytesSent.add(Math.max(0, sentBytes - bytesSent));
            a.packetsSent.add(Math.max(0, sentPackets - packetsSent));
            a.bytesLost.add(Math.max(0, lostBytes - bytesLost));
            a.packetsLost.add(Math.max(0, lostPackets - packetsLost));
            a.bytesAcked.add(Math.max(0, ackedBytes - bytesAcked));
        }
        bytesSent = Math.max(bytesSent, sentBytes);
        packetsSent = Math.max(packetsSent, sentPackets);
        bytesLost = Math.max(bytesLost, lostBytes);
        packetsLost = Math.max(packetsLost, lostPackets);
        bytesAcked = Math.max(bytesAcked, ackedBytes);
        lossSeen |= lostPackets > 0;
        if (firstDataSent < 0 && sentPackets > 0) {
            firstDataSent = now;
        }
        if (ackedBytes > 0) {
            lastAcked = now;
        }
        if (rttNanos > 0) {
            rtt.onSample(rttNanos, 0);
            histogram.record(rttNanos);
            if (a != null) {
                a.rttSample(rttNanos);
            }
        }
        lastActivity = now;
    }

    /** Packets that left flight without an outcome (a discarded packet-number space). */
    public synchronized void discarded(int bytes) {
        inFlight = Math.max(0, inFlight - bytes);
    }

    /** The library reset its controller's flight (e.g. when recovery stops). */
    public synchronized void resetFlight() {
        inFlight = 0;
    }

    /** A fallback on this connection (counted on its arm). */
    public void fellBack() {
        ArmStats a = arm;
        if (a != null) {
            a.fallback();
        }
    }

    // ---------------------------------------------------------------- summaries

    /** The connection closed: its final summary, the arm's guard window. Idempotent. */
    public void close() {
        closeAs("close");
    }

    /** The agent detached while the connection lives: see {@link #closeAs}. */
    public void detached() {
        closeAs("detach");
    }

    /**
     * The agent lets go of the connection ({@code "detach"}: the connection lives on, unmeasured) or it
     * closed ({@code "close"}): the last summary, with that trigger; the arm's open count goes down;
     * the meter leaves the live table and ignores every later call. Only a real close feeds the guard.
     * Idempotent (whichever comes first wins).
     */
    void closeAs(String trigger) {
        Snapshot s = snapshotFor(trigger, true);
        if (s == null) {
            return;
        }
        Summaries.unregister(this);
        ArmStats a = arm;
        if (a != null) {
            a.open.decrement();
            a.closed.increment();
            if (s.leftSlowStart) {
                a.leftSlowStart.increment();
            }
            if ("close".equals(trigger) && !"client".equals(s.role)) {
                // the guard judges the connections this JVM serves: a client's connections (mostly ACKs for
                // a download) say little about its controller, and one JVM may be both ends of a connection
                Guard.onClosed(a, s.bytesSent, s.bytesLost, s.packetsSent, s.rttP95, s.bytesAcked, s.transferTime, s.at);
            }
        }
        s.emit();
    }

    /** A periodic or detach summary (the connection lives on). */
    void summary(String trigger) {
        Snapshot s = snapshotFor(trigger, false);
        if (s != null) {
            s.emit();
        }
    }

    long lastActivity() {
        synchronized (this) {
            return lastActivity;
        }
    }

    /** Reads the figures (owner first: its calls take the library's locks, never inside ours). */
    private Snapshot snapshotFor(String trigger, boolean last) {
        String algorithm;
        String controller;
        SlowStart controllerSlowStart;
        String id;
        String role;
        try {
            algorithm = owner.algorithm();
            controller = owner.controller();
            controllerSlowStart = owner.controllerSlowStart();
            id = owner.connectionId();
            role = owner.role();
        } catch (RuntimeException e) {
            algorithm = "";
            controller = "";
            controllerSlowStart = SlowStart.UNKNOWN;
            id = "";
            role = "";
        }
        Snapshot s = new Snapshot();
        long now = System.nanoTime();
        synchronized (this) {
            if (closed) {
                return null;
            }
            if (last) {
                closed = true;
            }
            s.sequence = sequence++;
            lastSummary = now;
            s.at = now;
            s.lifetime = now - start;
            s.bytesSent = bytesSent;
            s.bytesAcked = bytesAcked;
            s.bytesLost = bytesLost;
            s.packetsSent = packetsSent;
            s.packetsLost = packetsLost;
            s.rttSamples = histogram.count();
            s.minRtt = rtt.hasSample() ? rtt.minRtt() : 0;
            s.smoothedRtt = rtt.hasSample() ? rtt.smoothedRtt() : 0;
            s.rttP50 = histogram.percentile(0.50);
            s.rttP95 = histogram.percentile(0.95);
            long idle = inFlight == 0 && idleSince >= 0 && !last ? Math.max(0, now - idleSince) : 0;
            s.appLimited = appLimited + idle;
            // a BBR keeps STARTUP through random loss: its own mode decides, a loss only where none is known
            s.leftSlowStart = controllerSlowStart == SlowStart.UNKNOWN ? lossSeen
                    : controllerSlowStart == SlowStart.LEFT;
            s.transferTime = firstDataSent >= 0 && lastAcked - firstDataSent > 0 ? lastAcked - firstDataSent : 0;
            s.armLabel = armLabel;
        }
        s.library = library;
        s.algorithm = algorithm;
        s.controller = controller;
        s.connectionId = id != null ? id : "";
        s.role = role != null ? role : "";
        s.trigger = trigger;
        return s;
    }

    /** One summary's figures (allocated per summary, never per packet). */
    static final class Snapshot {
        String library;
        String connectionId;
        String role;
        String armLabel;
        String algorithm;
        String controller;
        String trigger;
        long at;
        long sequence;
        long lifetime;
        long bytesSent;
        long bytesAcked;
        long bytesLost;
        long packetsSent;
        long packetsLost;
        long rttSamples;
        long minRtt;
        long smoothedRtt;
        long rttP50;
        long rttP95;
        long appLimited;
        long transferTime;
        boolean leftSlowStart;

        void emit() {
            if (!JfrSwitch.on) {
                return;
            }
            try {
                ConnectionSummary e = new ConnectionSummary();
                if (!e.shouldCommit()) {
                    return;
                }
                e.agentInstance = Summaries.AGENT_INSTANCE;
                e.library = library;
                e.connectionId = connectionId;
                e.role = role;
                e.canaryArm = armLabel;
                e.algorithm = algorithm;
                e.controller = controller;
                e.trigger = trigger;
                e.sequence = sequence;
                e.lifetime = lifetime;
                e.bytesSent = bytesSent;
                e.bytesAcked = bytesAcked;
                e.bytesLost = bytesLost;
                e.packetsSent = packetsSent;
                e.packetsLost = packetsLost;
                e.rttSamples = rttSamples;
                e.minRtt = minRtt;
                e.smoothedRtt = smoothedRtt;
                e.rttP50 = rttP50;
                e.rttP95 = rttP95;
                e.appLimitedTime = appLimited;
                e.transferTime = transferTime;
                e.leftSlowStart = leftSlowStart;
                e.commit();
            } catch (Throwable ignored) {
                // never break the host
            }
        }
    }
}
