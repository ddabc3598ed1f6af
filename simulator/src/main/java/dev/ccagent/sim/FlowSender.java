package dev.ccagent.sim;

import dev.ccagent.cc.AckEvent;
import dev.ccagent.cc.CcSnapshot;
import dev.ccagent.cc.CongestionController;
import dev.ccagent.cc.CongestionMode;
import dev.ccagent.cc.LossEvent;
import dev.ccagent.cc.RttEstimator;

import java.util.BitSet;
import java.util.Iterator;
import java.util.TreeMap;

/**
 * The sending end of one flow: the application's bytes, RFC 9002 loss detection (packet threshold
 * 3, time threshold 9/8, PTO with backoff, persistent congestion) feeding one of our
 * {@link CongestionController}s, whose window and pacer it honours; and the flow's statistics.
 * Packets go to the {@link Bottleneck}; ACK frames come back from the {@link ReturnPath}.
 */
final class FlowSender {

    /** Packet threshold, RFC 9002 kPacketThreshold. */
    static final int PACKET_THRESHOLD = 3;
    /** RFC 9002 kPersistentCongestionThreshold. */
    static final int PERSISTENT_CONGESTION_THRESHOLD = 3;
    /** Size of a PING probe sent by a PTO when there is no data. */
    static final int PING_BYTES = 60;

    final int index;
    final FlowConfig config;
    final CongestionController cc;
    final RttEstimator rtt;
    final FlowReceiver receiver;
    final TreeMap<Long, Packet> outstanding = new TreeMap<>();
    final AckEvent ackEvent = new AckEvent();
    final LossEvent lossEvent = new LossEvent();
    final BitSet declaredLost = new BitSet();
    final int mss;

    boolean started;
    long nextPacketNumber;
    long bytesInFlight;
    long ackElicitingInFlight;
    /** Application bytes made available so far. */
    long available;
    /** Fresh application bytes sent (first transmissions). */
    long freshSent;
    long retransmitPending;
    long delivered;
    long completedAt = -1;
    long wakeScheduled = Long.MAX_VALUE;
    boolean appLimitedReported;
    long largestAcked = -1;
    long lastAckElicitingSent;
    int ptoCount;
    long lossTimerToken;
    long firstRttSampleTime = -1;

    // statistics
    long packetsSent;
    long packetsLost;
    long bytesSent;
    long linkDrops;
    long tailDrops;
    long pacerWaits;
    long startupExitTime = -1;
    long startupPacketsSent;
    long startupPacketsLost;
    CongestionMode lastMode;
    final LongList queueDelays = new LongList();
    final LongList sampleTimes = new LongList();
    final LongList sampleDelivered = new LongList();

    private final SimulationConfig sim;
    private final EventQueue events;
    private final Bottleneck bottleneck;
    /** Scratch state shared by every flow of the run. */
    private final CcSnapshot snapshot;

    FlowSender(int index, FlowConfig config, CongestionController cc, SimulationConfig sim, EventQueue events,
            Bottleneck bottleneck, ReturnPath returnPath, CcSnapshot snapshot) {
        this.index = index;
        this.config = config;
        this.cc = cc;
        this.sim = sim;
        this.events = events;
        this.bottleneck = bottleneck;
        this.snapshot = snapshot;
        this.receiver = new FlowReceiver(this, sim, events, returnPath);
        this.mss = sim.mss;
        this.rtt = new RttEstimator(333_000_000L);
        this.lastMode = mode();
    }

    boolean done() {
        return completedAt >= 0;
    }

    void start() {
        started = true;
        if (config.writePeriodNanos > 0) {
            onAppWrite();
        } else {
            available = config.bytes;
            trySend();
        }
    }

    void onAppWrite() {
        if (done()) {
            return;
        }
        available = Math.min(config.bytes, saturatingAdd(available, config.writeBytes));
        if (available < config.bytes) {
            events.schedule(events.now() + config.writePeriodNanos, EventType.APP_WRITE, index, null);
        }
        trySend();
    }

    CongestionMode mode() {
        return cc.snapshot(snapshot).mode;
    }

    void noteMode() {
        CongestionMode m = mode();
        if (m != lastMode) {
            if (startupExitTime < 0 && lastMode.isStartup() && !m.isStartup()) {
                startupExitTime = events.now();
            }
            sim.observer.onModeChange(events.now(), index, lastMode, m);
            lastMode = m;
        }
    }

    private long sendableBytes() {
        return retransmitPending + (available - freshSent);
    }

    void trySend() {
        if (done() || !started) {
            return;
        }
        while (true) {
            if (sendableBytes() <= 0) {
                if (!appLimitedReported && cc.canSend(bytesInFlight)) {
                    appLimitedReported = true;
                    cc.onAppLimited(events.now(), bytesInFlight);
                }
                return;
            }
            if (!cc.canSend(bytesInFlight)) {
                return; // window full: an ack will wake us
            }
            long at = cc.earliestSendTime(events.now(), mss);
            if (at < events.now()) {
                throw new IllegalStateException(cc.algorithm() + ": pacer answered " + at
                        + " which is before now " + events.now());
            }
            if (at > events.now()) {
                pacerWaits++;
                if (at < wakeScheduled) {
                    wakeScheduled = at;
                    events.schedule(at, EventType.SENDER_WAKE, index, null);
                }
                return;
            }
            sendDataPacket();
        }
    }

    private void sendDataPacket() {
        int payload = (int) Math.min(mss, sendableBytes());
        long fromRetransmit = Math.min(retransmitPending, payload); // lost data goes first
        retransmitPending -= fromRetransmit;
        freshSent += payload - fromRetransmit;
        sendPacket(payload, payload, true);
    }

    void sendPacket(int payload, int size, boolean ackEliciting) {
        long pn = nextPacketNumber++;
        Packet p = new Packet(this, pn, events.now(), size, payload, ackEliciting);
        p.sentInStartup = lastMode.isStartup();
        outstanding.put(pn, p);
        packetsSent++;
        bytesSent += size;
        appLimitedReported = false;
        if (lastMode.isStartup()) {
            startupPacketsSent++;
        }
        if (ackEliciting) {
            bytesInFlight += size;
            ackElicitingInFlight++;
            lastAckElicitingSent = events.now();
        }
        cc.onPacketSent(events.now(), pn, size, bytesInFlight, ackEliciting);
        sim.observer.onPacketSent(events.now(), index, pn, size, lastMode);
        setLossTimer();
        bottleneck.enter(p);
    }

    void onAckFrame(AckFrame frame) {
        if (done()) {
            return;
        }
        AckEvent ack = ackEvent.reset(events.now(), bytesInFlight);
        boolean largestNewlyAcked = false;
        long largestSent = 0;
        boolean largestEliciting = false;
        for (long pn : frame.packetNumbers) {
            Packet p = outstanding.remove(pn);
            if (p == null) {
                continue; // already declared lost (spurious) — data was retransmitted
            }
            p.acked = true;
            if (pn == frame.largest) {
                largestNewlyAcked = true;
                largestSent = p.sentTime;
                largestEliciting = p.ackEliciting;
            }
            delivered += p.payload;
            if (p.ackEliciting) {
                bytesInFlight -= p.size;
                ackElicitingInFlight--;
                ack.addPacket(pn, p.sentTime, p.size);
            }
        }
        largestAcked = Math.max(largestAcked, frame.largest);
        boolean newSample = false;
        if (largestNewlyAcked && largestEliciting) {
            long ackDelay = Math.min(frame.ackDelay, sim.maxAckDelayNanos);
            rtt.onSample(events.now() - largestSent, ackDelay);
            newSample = true;
            if (firstRttSampleTime < 0) {
                firstRttSampleTime = events.now();
            }
        }
        ack.rtt(rtt, newSample);
        ack.ackDelayNanos = frame.ackDelay;
        if (ack.count() > 0) {
            ptoCount = 0;
            cc.onAck(ack);
        }
        detectLosses();
        noteMode();
        if (delivered >= config.bytes && config.bytes != Long.MAX_VALUE) {
            completedAt = events.now();
            return;
        }
        setLossTimer();
        trySend();
    }

    /** RFC 9002 §6.1: packet and time thresholds below the largest acknowledged. */
    void detectLosses() {
        if (largestAcked < 0) {
            return;
        }
        long lossDelay = rtt.lossDelay();
        long lostSendTime = events.now() - lossDelay;
        LossEvent loss = lossEvent.reset(events.now(), bytesInFlight);
        Iterator<Packet> it = outstanding.values().iterator();
        long firstLostSent = Long.MAX_VALUE;
        long lastLostSent = Long.MIN_VALUE;
        boolean contiguous = true;
        long previousLostPn = -1;
        while (it.hasNext()) {
            Packet p = it.next();
            if (p.number > largestAcked) {
                break;
            }
            if (p.sentTime <= lostSendTime || largestAcked - p.number >= PACKET_THRESHOLD) {
                it.remove();
                p.lost = true;
                declaredLost.set((int) Math.min(Integer.MAX_VALUE, p.number));
                packetsLost++;
                if (p.sentInStartup) {
                    startupPacketsLost++;
                }
                retransmitPending += p.payload;
                sim.observer.onPacketLost(events.now(), index, p.number, lastMode);
                if (p.ackEliciting) {
                    bytesInFlight -= p.size;
                    ackElicitingInFlight--;
                    loss.addPacket(p.number, p.sentTime, p.size);
                    if (previousLostPn >= 0 && p.number != previousLostPn + 1) {
                        contiguous = false;
                    }
                    previousLostPn = p.number;
                    firstLostSent = Math.min(firstLostSent, p.sentTime);
                    lastLostSent = Math.max(lastLostSent, p.sentTime);
                }
            }
        }
        if (loss.count() > 0) {
            long period = (rtt.smoothedRtt() + Math.max(4 * rtt.rttVariance(), RttEstimator.GRANULARITY_NANOS)
                    + sim.maxAckDelayNanos) * PERSISTENT_CONGESTION_THRESHOLD;
            loss.persistentCongestion = contiguous && loss.count() >= 2 && firstRttSampleTime >= 0
                    && firstRttSampleTime < firstLostSent && lastLostSent - firstLostSent > period;
            cc.onPacketsLost(loss);
        }
    }

    void setLossTimer() {
        long deadline = Long.MAX_VALUE;
        if (largestAcked >= 0) {
            long lossDelay = rtt.lossDelay();
            for (Packet p : outstanding.values()) {
                if (p.number >= largestAcked) {
                    break;
                }
                deadline = p.sentTime + lossDelay;
                break;
            }
        }
        if (deadline == Long.MAX_VALUE && ackElicitingInFlight > 0) {
            long pto = rtt.probeTimeout(sim.maxAckDelayNanos) << Math.min(ptoCount, 16);
            deadline = lastAckElicitingSent + pto;
        }
        lossTimerToken++;
        if (deadline != Long.MAX_VALUE) {
            ScheduledEvent e = events.schedule(Math.max(deadline, events.now()), EventType.LOSS_TIMER, index, null);
            e.seqToken = lossTimerToken;
        }
    }

    void onLossTimer(long token) {
        if (token != lossTimerToken || done()) {
            return; // superseded
        }
        long before = packetsLost;
        detectLosses();
        if (packetsLost == before && ackElicitingInFlight > 0) {
            // PTO: probe with new data if there is any, else a PING; ignores the window.
            ptoCount++;
            for (int i = 0; i < 2; i++) {
                if (sendableBytes() > 0) {
                    sendDataPacket();
                } else {
                    sendPacket(0, PING_BYTES, true);
                }
            }
        }
        noteMode();
        setLossTimer();
        trySend();
    }

    void recordSample(long t) {
        sampleTimes.add(t);
        sampleDelivered.add(delivered);
    }

    private static long saturatingAdd(long a, long b) {
        long r = a + b;
        return r < a ? Long.MAX_VALUE : r;
    }
}
