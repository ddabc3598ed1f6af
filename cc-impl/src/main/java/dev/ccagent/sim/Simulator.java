package dev.ccagent.sim;

import dev.ccagent.cc.AckEvent;
import dev.ccagent.cc.Algorithms;
import dev.ccagent.cc.CcSnapshot;
import dev.ccagent.cc.CongestionController;
import dev.ccagent.cc.CongestionMode;
import dev.ccagent.cc.LossEvent;
import dev.ccagent.cc.RttEstimator;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.TreeMap;

/**
 * A deterministic discrete-event simulation of QUIC-like flows through one bottleneck.
 *
 * <p>Data path: sender → random loss → drop-tail queue → serialisation at the bottleneck rate →
 * one-way propagation (RTT/2) → receiver. Return path: optional ACK aggregation → RTT/2 → sender;
 * ACKs are never lost, so an ACK frame carries only the packet numbers received since the previous
 * one. Senders run RFC 9002 loss detection (packet threshold 3, time threshold 9/8, PTO with
 * backoff, persistent congestion) and feed one of our {@link CongestionController}s, honouring its
 * window and its pacer. Receivers ack every second ack-eliciting packet, at once on a gap, or after
 * max_ack_delay.
 *
 * <p>Events at equal times run in the order they were scheduled, and all randomness comes from
 * {@link SplittableRandom}s seeded from the config: same config, same result, bit for bit.
 *
 * <p>Invariants are checked as it runs and violations throw {@link IllegalStateException}: a pacer
 * that answers with a send time in the past, a queue above its buffer, a link faster than its rate.
 */
public final class Simulator {

    static final int START = 0;
    static final int SENDER_WAKE = 1;
    static final int LINK_DEPART = 2;
    static final int DATA_ARRIVE = 3;
    static final int ACK_TIMER = 4;
    static final int ACK_ARRIVE = 5;
    static final int LOSS_TIMER = 6;
    static final int RATE_CHANGE = 7;
    static final int SAMPLE = 8;
    static final int AGGREGATION_RELEASE = 9;
    static final int APP_WRITE = 10;

    /** Packet threshold, RFC 9002 kPacketThreshold. */
    static final int PACKET_THRESHOLD = 3;
    /** RFC 9002 kPersistentCongestionThreshold. */
    static final int PERSISTENT_CONGESTION_THRESHOLD = 3;
    /** Size of a PING probe sent by a PTO when there is no data. */
    static final int PING_BYTES = 60;

    private final SimulationConfig config;
    private final PriorityQueue<Event> events = new PriorityQueue<>();
    private final SplittableRandom lossRandom;
    private final List<Flow> flows = new ArrayList<>();
    private long now;
    private long eventSeq;

    // bottleneck
    private long rateBps;
    private final ArrayDeque<Packet> queue = new ArrayDeque<>();
    private long queuedBytes;
    private long maxQueuedBytes;
    private boolean linkBusy;
    private long linkBytesDeparted;
    private long lastDepartureEnd;
    private final List<long[]> rateHistory = new ArrayList<>();

    // return-path aggregation
    private final ArrayDeque<AckFrame> heldAcks = new ArrayDeque<>();
    private long heldAckBytes;
    private boolean releaseScheduled;

    private final CcSnapshot snapshot = new CcSnapshot();

    public Simulator(SimulationConfig config) {
        this.config = config;
        this.lossRandom = new SplittableRandom(config.seed);
        this.rateBps = config.rateBitsPerSecond;
        rateHistory.add(new long[] {0, rateBps});
        for (int i = 0; i < config.flows.size(); i++) {
            FlowConfig fc = config.flows.get(i);
            CongestionController cc = Algorithms.create(fc.algorithm, withSeed(fc, i));
            flows.add(new Flow(i, fc, cc));
        }
    }

    /** BBR variants take a seed; give each flow a distinct one derived from the run's seed. */
    private Map<String, String> withSeed(FlowConfig fc, int index) {
        if (fc.options.containsKey("seed")
                || !Algorithms.descriptor(fc.algorithm).options().containsKey("seed")) {
            return fc.options;
        }
        java.util.LinkedHashMap<String, String> m = new java.util.LinkedHashMap<>(fc.options);
        m.put("seed", Long.toString(config.seed * 31 + index));
        return m;
    }

    /** Runs to completion (all byte-counted flows done) or to the configured duration. */
    public SimulationResult run() {
        for (Flow f : flows) {
            schedule(f.config.startNanos, START, f.index, null);
        }
        for (SimulationConfig.RateChange rc : config.rateChanges) {
            schedule(rc.atNanos, RATE_CHANGE, -1, rc);
        }
        schedule(0, SAMPLE, -1, null);
        long end = config.durationNanos > 0 ? config.durationNanos : Long.MAX_VALUE;
        while (!events.isEmpty()) {
            Event e = events.poll();
            if (e.time > end) {
                now = end;
                break;
            }
            now = e.time;
            dispatch(e);
            if (allDone()) {
                break;
            }
        }
        return result();
    }

    private boolean allDone() {
        for (Flow f : flows) {
            if (!f.done()) {
                return false;
            }
        }
        return config.durationNanos == 0 || flows.stream().allMatch(f -> f.config.bytes != Long.MAX_VALUE);
    }

    private void dispatch(Event e) {
        Flow f = e.flow >= 0 ? flows.get(e.flow) : null;
        switch (e.type) {
            case START:
                f.start();
                break;
            case SENDER_WAKE:
                // A wake superseded by an earlier one is stale: it may still try to send, but must
                // not clear the pending wake, or each stale wake would start another wake chain.
                if (e.time >= f.wakeScheduled) {
                    f.wakeScheduled = Long.MAX_VALUE;
                }
                f.trySend();
                break;
            case LINK_DEPART:
                onLinkDeparture((Packet) e.payload);
                break;
            case DATA_ARRIVE:
                f.receiver.onData((Packet) e.payload);
                break;
            case ACK_TIMER:
                f.receiver.onAckTimer(e.seqToken);
                break;
            case ACK_ARRIVE:
                f.onAckFrame((AckFrame) e.payload);
                break;
            case LOSS_TIMER:
                f.onLossTimer(e.seqToken);
                break;
            case RATE_CHANGE:
                rateBps = ((SimulationConfig.RateChange) e.payload).bitsPerSecond;
                rateHistory.add(new long[] {now, rateBps});
                break;
            case SAMPLE:
                sample();
                schedule(now + config.sampleIntervalNanos, SAMPLE, -1, null);
                break;
            case AGGREGATION_RELEASE:
                releaseScheduled = false;
                releaseHeldAcks();
                break;
            case APP_WRITE:
                f.onAppWrite();
                break;
            default:
                throw new IllegalStateException("unknown event " + e.type);
        }
    }

    private void sample() {
        for (Flow f : flows) {
            if (f.started && !f.done()) {
                f.cc.snapshot(snapshot);
                snapshot.bytesInFlight = f.bytesInFlight;
                f.recordSample(now);
                config.observer.onSample(now, f.index, snapshot, queuedBytes, f.rtt.latestRtt());
            }
        }
    }

    // ---------------------------------------------------------------- bottleneck

    private void enterLink(Packet p) {
        if (config.lossProbability > 0 && lossRandom.nextDouble() < config.lossProbability) {
            p.flow.linkDrops++;
            return;
        }
        if (queuedBytes + p.size > config.bufferBytes) {
            p.flow.linkDrops++;
            p.flow.tailDrops++;
            return;
        }
        p.enqueuedAt = now;
        queue.addLast(p);
        queuedBytes += p.size;
        maxQueuedBytes = Math.max(maxQueuedBytes, queuedBytes);
        if (queuedBytes > config.bufferBytes) {
            throw new IllegalStateException("queue " + queuedBytes + " B above buffer " + config.bufferBytes);
        }
        if (!linkBusy) {
            startTransmission();
        }
    }

    private void startTransmission() {
        Packet p = queue.peekFirst();
        if (p == null) {
            linkBusy = false;
            return;
        }
        linkBusy = true;
        if (now < lastDepartureEnd) {
            throw new IllegalStateException("link started a packet before the previous one left");
        }
        p.queueDelay = now - p.enqueuedAt;
        long serialisation = Math.max(1, (long) Math.ceil(p.size * 8.0 * 1e9 / rateBps));
        lastDepartureEnd = now + serialisation;
        schedule(now + serialisation, LINK_DEPART, p.flow.index, p);
    }

    private void onLinkDeparture(Packet p) {
        Packet head = queue.pollFirst();
        if (head != p) {
            throw new IllegalStateException("bottleneck queue out of order");
        }
        queuedBytes -= p.size;
        linkBytesDeparted += p.size;
        schedule(now + config.rttNanos / 2, DATA_ARRIVE, p.flow.index, p);
        startTransmission();
    }

    // ---------------------------------------------------------------- return path

    private void sendAck(AckFrame ack) {
        if (config.ackAggregationBytes <= 0) {
            schedule(now + config.rttNanos - config.rttNanos / 2, ACK_ARRIVE, ack.flow, ack);
            return;
        }
        heldAcks.addLast(ack);
        heldAckBytes += ack.ackedBytes;
        if (heldAckBytes >= config.ackAggregationBytes) {
            releaseHeldAcks();
        } else if (!releaseScheduled) {
            releaseScheduled = true;
            schedule(now + config.ackAggregationNanos, AGGREGATION_RELEASE, -1, null);
        }
    }

    private void releaseHeldAcks() {
        long arrive = now + config.rttNanos - config.rttNanos / 2;
        while (!heldAcks.isEmpty()) {
            AckFrame a = heldAcks.pollFirst();
            schedule(arrive, ACK_ARRIVE, a.flow, a);
        }
        heldAckBytes = 0;
    }

    // ---------------------------------------------------------------- scheduling

    private Event schedule(long time, int type, int flow, Object payload) {
        Event e = new Event(time, eventSeq++, type, flow, payload);
        events.add(e);
        return e;
    }

    private static final class Event implements Comparable<Event> {
        final long time;
        final long seq;
        final int type;
        final int flow;
        final Object payload;
        long seqToken;

        Event(long time, long seq, int type, int flow, Object payload) {
            this.time = time;
            this.seq = seq;
            this.type = type;
            this.flow = flow;
            this.payload = payload;
        }

        @Override
        public int compareTo(Event o) {
            int c = Long.compare(time, o.time);
            return c != 0 ? c : Long.compare(seq, o.seq);
        }
    }

    static final class Packet {
        final Flow flow;
        final long number;
        final long sentTime;
        final int size;
        final int payload;
        final boolean ackEliciting;
        long enqueuedAt;
        long queueDelay;
        boolean acked;
        boolean lost;
        boolean sentInStartup;

        Packet(Flow flow, long number, long sentTime, int size, int payload, boolean ackEliciting) {
            this.flow = flow;
            this.number = number;
            this.sentTime = sentTime;
            this.size = size;
            this.payload = payload;
            this.ackEliciting = ackEliciting;
        }
    }

    static final class AckFrame {
        final int flow;
        final long[] packetNumbers;
        final long largest;
        final long ackDelay;
        final long ackedBytes;

        AckFrame(int flow, long[] packetNumbers, long largest, long ackDelay, long ackedBytes) {
            this.flow = flow;
            this.packetNumbers = packetNumbers;
            this.largest = largest;
            this.ackDelay = ackDelay;
            this.ackedBytes = ackedBytes;
        }
    }

    // ---------------------------------------------------------------- flows

    final class Flow {
        final int index;
        final FlowConfig config;
        final CongestionController cc;
        final RttEstimator rtt;
        final Receiver receiver = new Receiver(this);
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

        Flow(int index, FlowConfig config, CongestionController cc) {
            this.index = index;
            this.config = config;
            this.cc = cc;
            this.mss = Simulator.this.config.mss;
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
                schedule(now + config.writePeriodNanos, APP_WRITE, index, null);
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
                    startupExitTime = now;
                }
                Simulator.this.config.observer.onModeChange(now, index, lastMode, m);
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
                        cc.onAppLimited(now, bytesInFlight);
                    }
                    return;
                }
                if (!cc.canSend(bytesInFlight)) {
                    return; // window full: an ack will wake us
                }
                long at = cc.earliestSendTime(now, mss);
                if (at < now) {
                    throw new IllegalStateException(cc.algorithm() + ": pacer answered " + at
                            + " which is before now " + now);
                }
                if (at > now) {
                    pacerWaits++;
                    if (at < wakeScheduled) {
                        wakeScheduled = at;
                        schedule(at, SENDER_WAKE, index, null);
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
            Packet p = new Packet(this, pn, now, size, payload, ackEliciting);
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
                lastAckElicitingSent = now;
            }
            cc.onPacketSent(now, pn, size, bytesInFlight, ackEliciting);
            Simulator.this.config.observer.onPacketSent(now, index, pn, size, lastMode);
            setLossTimer();
            enterLink(p);
        }

        void onAckFrame(AckFrame frame) {
            if (done()) {
                return;
            }
            AckEvent ack = ackEvent.reset(now, bytesInFlight);
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
                long ackDelay = Math.min(frame.ackDelay, Simulator.this.config.maxAckDelayNanos);
                rtt.onSample(now - largestSent, ackDelay);
                newSample = true;
                if (firstRttSampleTime < 0) {
                    firstRttSampleTime = now;
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
                completedAt = now;
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
            long lostSendTime = now - lossDelay;
            LossEvent loss = lossEvent.reset(now, bytesInFlight);
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
                    Simulator.this.config.observer.onPacketLost(now, index, p.number, lastMode);
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
                        + Simulator.this.config.maxAckDelayNanos) * PERSISTENT_CONGESTION_THRESHOLD;
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
                long pto = rtt.probeTimeout(Simulator.this.config.maxAckDelayNanos) << Math.min(ptoCount, 16);
                deadline = lastAckElicitingSent + pto;
            }
            lossTimerToken++;
            if (deadline != Long.MAX_VALUE) {
                Event e = schedule(Math.max(deadline, now), LOSS_TIMER, index, null);
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
    }

    /** The receiving end of a flow: acks every second ack-eliciting packet, on gaps, or on a timer. */
    final class Receiver {
        final Flow flow;
        final BitSet received = new BitSet();
        final LongList pending = new LongList();
        long pendingBytes;
        long largestReceived = -1;
        long largestReceivedAt;
        int unackedEliciting;
        long timerToken;
        boolean timerArmed;
        long deliveredPayload;

        Receiver(Flow flow) {
            this.flow = flow;
        }

        void onData(Packet p) {
            flow.queueDelays.add(p.queueDelay);
            config.observer.onPacketDelivered(now, flow.index, p.number, p.queueDelay);
            int bit = (int) Math.min(Integer.MAX_VALUE, p.number);
            if (received.get(bit)) {
                return;
            }
            received.set(bit);
            deliveredPayload += p.payload;
            boolean gap = p.number != largestReceived + 1;
            if (p.number > largestReceived) {
                largestReceived = p.number;
                largestReceivedAt = now;
            }
            pending.add(p.number);
            pendingBytes += p.size;
            if (!p.ackEliciting) {
                return;
            }
            unackedEliciting++;
            if (unackedEliciting >= 2 || gap || config.maxAckDelayNanos == 0) {
                sendAckNow();
            } else if (!timerArmed) {
                timerArmed = true;
                timerToken++;
                Event e = schedule(now + config.maxAckDelayNanos, ACK_TIMER, flow.index, null);
                e.seqToken = timerToken;
            }
        }

        void onAckTimer(long token) {
            if (token == timerToken && timerArmed) {
                sendAckNow();
            }
        }

        void sendAckNow() {
            timerArmed = false;
            timerToken++;
            unackedEliciting = 0;
            if (pending.size() == 0) {
                return;
            }
            AckFrame ack = new AckFrame(flow.index, pending.toArray(), largestReceived,
                    now - largestReceivedAt, pendingBytes);
            pending.clear();
            pendingBytes = 0;
            sendAck(ack);
        }
    }

    // ---------------------------------------------------------------- results

    private SimulationResult result() {
        long end = now;
        List<SimulationResult.FlowResult> results = new ArrayList<>();
        long firstStart = Long.MAX_VALUE;
        long lastEnd = 0;
        for (Flow f : flows) {
            f.cc.snapshot(snapshot);
            long finish = f.done() ? f.completedAt : end;
            firstStart = Math.min(firstStart, f.config.startNanos);
            lastEnd = Math.max(lastEnd, finish);
            results.add(new SimulationResult.FlowResult(f.index, f.cc.algorithm(), f.config.startNanos,
                    f.done() ? f.completedAt : -1, finish, f.delivered, f.packetsSent, f.packetsLost, f.bytesSent,
                    f.linkDrops, f.tailDrops, spuriousLosses(f), f.rtt.smoothedRtt(), f.rtt.minRtt(),
                    new CcSnapshot().copyFrom(snapshot), f.startupExitTime, f.startupPacketsSent,
                    f.startupPacketsLost, f.queueDelays.toArray(), f.sampleTimes.toArray(),
                    f.sampleDelivered.toArray(), f.receiver.deliveredPayload, f.pacerWaits));
        }
        double capacityBits = capacityBits(firstStart, lastEnd);
        double utilisation = capacityBits > 0 ? linkBytesDeparted * 8.0 / capacityBits : 0;
        return new SimulationResult(results, Math.min(1.0, utilisation), linkBytesDeparted, maxQueuedBytes,
                config.bufferBytes, end);
    }

    private static int spuriousLosses(Flow f) {
        BitSet both = (BitSet) f.declaredLost.clone();
        both.and(f.receiver.received);
        return both.cardinality();
    }

    /** Bits the bottleneck could have carried between two times, following the rate schedule. */
    private double capacityBits(long from, long to) {
        double bits = 0;
        for (int i = 0; i < rateHistory.size(); i++) {
            long segStart = rateHistory.get(i)[0];
            long segEnd = i + 1 < rateHistory.size() ? rateHistory.get(i + 1)[0] : Long.MAX_VALUE;
            long a = Math.max(from, segStart);
            long b = Math.min(to, segEnd);
            if (b > a) {
                bits += rateHistory.get(i)[1] * ((b - a) / 1e9);
            }
        }
        return bits;
    }

    private static long saturatingAdd(long a, long b) {
        long r = a + b;
        return r < a ? Long.MAX_VALUE : r;
    }

    /** A growable list of primitive longs. */
    static final class LongList {
        private long[] values = new long[64];
        private int size;

        void add(long v) {
            if (size == values.length) {
                values = java.util.Arrays.copyOf(values, size * 2);
            }
            values[size++] = v;
        }

        int size() {
            return size;
        }

        void clear() {
            size = 0;
        }

        long[] toArray() {
            return java.util.Arrays.copyOf(values, size);
        }
    }
}
