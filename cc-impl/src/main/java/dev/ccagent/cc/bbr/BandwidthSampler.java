package dev.ccagent.cc.bbr;

import dev.ccagent.cc.AckEvent;

/**
 * Delivery-rate sampling for BBR, after draft-cheng-iccrg-delivery-rate-estimation as used by
 * Linux {@code net/ipv4/tcp_rate.c}, quiche's {@code bandwidth_sampler.cc} and picoquic.
 *
 * <p>For every ack-eliciting packet sent it remembers the connection's delivery state at send
 * time: bytes delivered so far, when that delivery happened, the send time of the first packet of
 * the current flight, bytes lost so far, bytes in flight and whether the sender was application
 * limited. When an ACK arrives, the newest-sent acknowledged packet P gives one rate sample:
 * <pre>
 *   delivered  = C.delivered − P.delivered
 *   send_elapsed = P.sent_time − P.first_sent_time
 *   ack_elapsed  = now − P.delivered_time
 *   rate = delivered / max(send_elapsed, ack_elapsed)
 * </pre>
 * The max of the two intervals keeps ACK compression from inflating the estimate. As in Linux, an
 * interval shorter than the min RTT is not trusted. An interval of zero or less (loopback ACKs can
 * share a timestamp with the send) and a rate that comes out at zero give no sample: such a
 * sample is never stored, so it can never reach the bandwidth filter or the pacer (the cause of
 * the quic-go localhost spin, issue 4054).
 *
 * <p>Per-packet state lives in a preallocated ring indexed by packet number. It grows by doubling
 * only when the span between the oldest tracked packet and a new one exceeds the capacity, up to
 * {@link #MAX_CAPACITY}. Beyond that it degrades gracefully (issue #15): a new packet that does
 * not fit is not tracked (as quiche's {@code BandwidthSampler} stops tracking at
 * {@code max_tracked_packets_}), but its packet number range is remembered so that its bytes
 * still count as delivered or lost when it is acknowledged or declared lost; the tracked packets
 * keep giving samples and round starts. (Before, the oldest entries were forgotten, and those are
 * the ones the next ACKs acknowledge: no sample, no round, STARTUP never ended.) Packets acknowledged out of order, twice, after
 * being declared lost, or never tracked are handled by lookup: an absent entry gives nothing.
 * Allocation free except for that growth; not thread-safe.
 *
 * <p><b>Overestimate avoidance</b> ({@link #setOverestimateAvoidance}, off unless the algorithm
 * turns it on), after Chromium's and quiche's sampler ({@code bandwidth_sampler.rs},
 * {@code choose_a0_point}, {@code enable_overestimate_avoidance} in quiche's BBRv2): when ACKs
 * arrive in bursts, the packet sent in reply to a burst's first ACK records that instant as its
 * delivered time, and the rest of the same burst then counts as delivered inside the sample's
 * interval: such a sample reads up to a burst's worth too high, and the max filter keeps the
 * highest (23.8 Mbit/s on a 20 Mbit/s link with ACKs released every 20 ms). With avoidance on,
 * the start of each ACK aggregation epoch (an ACK after which the epoch's ACKed bytes no longer
 * exceed twice the rate given to {@link #onAckEventEnd}, the factor quiche uses with avoidance
 * on) remembers the last ACK point before it (time and delivered bytes) as an "A0" candidate,
 * and a sample is at most the ACK rate from the latest candidate at or before the sampled
 * packet's own delivered count: from the end of the previous burst, not from inside the current
 * one. quiche takes that ACK rate (with the send rate) in place of the draft's sample; here it
 * can only lower the draft's sample, so that it corrects this overestimate and nothing else
 * (from an older point the rate can also come out higher than the draft's, where the draft's
 * ACK interval was the longer one).
 * {@link #sampleDelivered()} and {@link #sampleInterval()} stay the draft's.
 */
public final class BandwidthSampler {

    /** Initial ring capacity in packets. */
    public static final int INITIAL_CAPACITY = 256;
    /** Largest ring (packets spanned between the oldest tracked and the newest sent). */
    public static final int MAX_CAPACITY = 1 << 20;

    // ---- ring of per-packet send state; size 0 marks an empty slot ----
    private int mask;
    private int[] size;
    private long[] sentTime;
    private long[] deliveredAtSend;
    private long[] deliveredTimeAtSend;
    private long[] firstSentTimeAtSend;
    private long[] lostAtSend;
    private long[] inflightAtSend;
    private boolean[] appLimitedAtSend;
    /** Lowest packet number that may still be tracked (all below are gone). */
    private long base;
    /** One past the highest packet number tracked so far. */
    private long end;
    private int tracked;
    /** Packet-number ranges [start, end) sent but not tracked for want of room; a small ring. */
    private static final int SKIPPED_RANGES = 16;
    private final long[] skippedStart = new long[SKIPPED_RANGES];
    private final long[] skippedEnd = new long[SKIPPED_RANGES];
    private int skippedHead = -1;
    private long skippedPackets;

    // ---- connection delivery state ----
    private long delivered;
    private long deliveredTime;
    private long firstSentTime;
    private long lost;
    /** Delivered-bytes mark until which samples are app-limited; 0 when not app-limited. */
    private long appLimitedUntil;
    private long lastSentPacket = -1;
    private long largestAckedPacket = -1;

    // ---- overestimate avoidance: A0 candidates and the aggregation epoch that makes them ----
    /** A0 candidates kept; older ones are forgotten when more arrive (quiche keeps a queue). */
    static final int A0_CANDIDATES = 32;
    /** ACKed bytes above this multiple of the estimate keep an aggregation epoch going (quiche: 2.0). */
    static final double EPOCH_THRESHOLD = 2.0;
    private boolean overestimateAvoidance;
    private final long[] a0Time = new long[A0_CANDIDATES];
    private final long[] a0Delivered = new long[A0_CANDIDATES];
    private int a0First;
    private int a0Count;
    /**
     * The last ACK's time, and the last ACK point (time, delivered after it) with an earlier time;
     * the last point's delivered count is {@link #delivered} itself until the next ACK.
     */
    private long pointTime = Long.MIN_VALUE;
    private long earlierPointTime = Long.MIN_VALUE;
    private long earlierPointDelivered;
    private long epochStart = Long.MIN_VALUE;
    private long epochBytes;
    private long lastSentBeforeEpoch = -1;

    // ---- the last ACK's rate sample ("rs") ----
    private boolean hasPacket;
    private boolean rateValid;
    private long sampleRate;
    private long sampleDelivered;
    private long sampleInterval;
    private long samplePriorDelivered;
    private long samplePriorTime;
    private long sampleSentTime;
    private long sampleSendElapsed;
    private long sampleAckElapsed;
    private boolean sampleAppLimited;
    private long sampleTxInFlight;
    private long sampleLost;
    private long newlyAcked;

    // ---- the last lost packet's send state ----
    private long lostPacketTxInFlight;
    private long lostPacketLostSinceSend;
    private boolean lostPacketAppLimited;
    private long lostPacketDeliveredAtSend;

    public BandwidthSampler() {
        this(INITIAL_CAPACITY);
    }

    public BandwidthSampler(int initialCapacity) {
        int cap = Integer.highestOneBit(Math.max(16, Math.min(MAX_CAPACITY, initialCapacity)) - 1) << 1;
        allocate(cap);
    }

    private void allocate(int cap) {
        mask = cap - 1;
        size = new int[cap];
        sentTime = new long[cap];
        deliveredAtSend = new long[cap];
        deliveredTimeAtSend = new long[cap];
        firstSentTimeAtSend = new long[cap];
        lostAtSend = new long[cap];
        inflightAtSend = new long[cap];
        appLimitedAtSend = new boolean[cap];
    }

    /** Ring capacity in packets. */
    public int capacity() {
        return mask + 1;
    }

    /** Packets currently tracked. */
    public int trackedPackets() {
        return tracked;
    }

    // ---------------------------------------------------------------- events

    /**
     * Records an ack-eliciting packet.
     *
     * @param inflightAfter bytes in flight including this packet
     */
    public void onPacketSent(long now, long packetNumber, int bytes, long inflightAfter) {
        if (bytes <= 0) {
            return;
        }
        long inflightBefore = inflightAfter - bytes;
        if (inflightBefore <= 0 || tracked == 0) {
            // A new flight after quiescence: both intervals start now (the draft's "A0 point").
            firstSentTime = now;
            deliveredTime = now;
            if (overestimateAvoidance) {
                a0Count = 0;
                pointTime = now;
                earlierPointTime = Long.MIN_VALUE;
                pushA0(now, delivered);
            }
        }
        lastSentPacket = Math.max(lastSentPacket, packetNumber);
        if (tracked == 0) {
            base = packetNumber;
            end = packetNumber + 1;
        } else if (packetNumber < base) {
            return; // older than anything tracked: cannot be placed, gives no sample
        } else if (packetNumber >= end) {
            if (!ensureSpan(packetNumber)) {
                noteSkipped(packetNumber);
                return;
            }
            end = packetNumber + 1;
        }
        int i = (int) (packetNumber & mask);
        if (size[i] == 0) {
            tracked++;
        }
        size[i] = bytes;
        sentTime[i] = now;
        deliveredAtSend[i] = delivered;
        deliveredTimeAtSend[i] = deliveredTime;
        firstSentTimeAtSend[i] = firstSentTime;
        lostAtSend[i] = lost;
        inflightAtSend[i] = Math.max(bytes, inflightAfter);
        appLimitedAtSend[i] = appLimitedUntil != 0;
    }

    /** Makes room so that {@code packetNumber - base} fits in the ring; false when it cannot. */
    private boolean ensureSpan(long packetNumber) {
        long span = packetNumber - base + 1;
        if (span <= capacity()) {
            return true;
        }
        if (capacity() < MAX_CAPACITY) {
            int cap = capacity();
            while (cap < span && cap < MAX_CAPACITY) {
                cap <<= 1;
            }
            grow(cap);
        }
        return packetNumber - base + 1 <= capacity();
    }

    private void noteSkipped(long packetNumber) {
        skippedPackets++;
        if (skippedHead >= 0 && skippedEnd[skippedHead] == packetNumber) {
            skippedEnd[skippedHead] = packetNumber + 1; // extends the current range
            return;
        }
        skippedHead = (skippedHead + 1) % SKIPPED_RANGES; // overwrites the oldest range
        skippedStart[skippedHead] = packetNumber;
        skippedEnd[skippedHead] = packetNumber + 1;
    }

    private boolean wasSkipped(long packetNumber) {
        if (skippedHead < 0) {
            return false;
        }
        for (int k = 0; k < SKIPPED_RANGES; k++) {
            if (packetNumber >= skippedStart[k] && packetNumber < skippedEnd[k]) {
                return true;
            }
        }
        return false;
    }

    /** Packets not tracked because the ring was full (see the class comment). */
    public long skippedPackets() {
        return skippedPackets;
    }

    private void grow(int newCap) {
        int oldMask = mask;
        int[] oSize = size;
        long[] oSent = sentTime;
        long[] oDel = deliveredAtSend;
        long[] oDelTime = deliveredTimeAtSend;
        long[] oFirst = firstSentTimeAtSend;
        long[] oLost = lostAtSend;
        long[] oInflight = inflightAtSend;
        boolean[] oApp = appLimitedAtSend;
        allocate(newCap);
        for (long p = base; p < end; p++) {
            int o = (int) (p & oldMask);
            if (oSize[o] == 0) {
                continue;
            }
            int n = (int) (p & mask);
            size[n] = oSize[o];
            sentTime[n] = oSent[o];
            deliveredAtSend[n] = oDel[o];
            deliveredTimeAtSend[n] = oDelTime[o];
            firstSentTimeAtSend[n] = oFirst[o];
            lostAtSend[n] = oLost[o];
            inflightAtSend[n] = oInflight[o];
            appLimitedAtSend[n] = oApp[o];
        }
    }

    private int indexOf(long packetNumber) {
        if (tracked == 0 || packetNumber < base || packetNumber >= end) {
            return -1;
        }
        int i = (int) (packetNumber & mask);
        return size[i] != 0 ? i : -1;
    }

    private void remove(int i, long packetNumber) {
        size[i] = 0;
        tracked--;
        if (tracked == 0) {
            base = end;
        } else if (packetNumber == base) {
            advanceBase();
        }
    }

    private void advanceBase() {
        while (base < end && size[(int) (base & mask)] == 0) {
            base++;
        }
    }

    /**
     * The sender ran out of data with {@code bytesInFlight} outstanding: samples taken until that
     * much more has been delivered are marked application limited.
     */
    public void onAppLimited(long bytesInFlight) {
        appLimitedUntil = Math.max(1, delivered + Math.max(0, bytesInFlight));
    }

    /** Whether samples are currently being marked application limited. */
    public boolean isAppLimited() {
        return appLimitedUntil != 0;
    }

    /**
     * Processes the newly acknowledged packets of an ACK and computes this ACK's rate sample.
     *
     * @param minRttNanos the current min RTT (0 when unknown): intervals shorter than it are not
     *                    trusted
     */
    public void onAck(AckEvent ack, long minRttNanos) {
        long now = ack.timeNanos;
        hasPacket = false;
        rateValid = false;
        sampleRate = 0;
        sampleDelivered = 0;
        sampleInterval = 0;
        newlyAcked = 0;
        if (overestimateAvoidance && now > pointTime) {
            earlierPointTime = pointTime;
            earlierPointDelivered = delivered; // as the ACK at pointTime left it
            pointTime = now;
        }
        int n = ack.count();
        for (int k = 0; k < n; k++) {
            long pn = ack.packetNumber(k);
            int i = indexOf(pn);
            if (i < 0) {
                if (wasSkipped(pn)) {
                    // untracked for want of room: it gives no sample, but it was delivered
                    int b = ack.bytes(k);
                    delivered += b;
                    newlyAcked += b;
                    deliveredTime = Math.max(deliveredTime, now);
                    largestAckedPacket = Math.max(largestAckedPacket, pn);
                }
                continue;
            }
            int bytes = size[i];
            delivered += bytes;
            newlyAcked += bytes;
            deliveredTime = Math.max(deliveredTime, now);
            largestAckedPacket = Math.max(largestAckedPacket, pn);
            // The sample comes from the most recently sent packet: largest delivered-at-send, ties
            // broken by send time (packets acked out of order are looked up, not assumed).
            if (!hasPacket || deliveredAtSend[i] > samplePriorDelivered
                    || (deliveredAtSend[i] == samplePriorDelivered && sentTime[i] >= sampleSentTime)) {
                hasPacket = true;
                samplePriorDelivered = deliveredAtSend[i];
                samplePriorTime = deliveredTimeAtSend[i];
                sampleSentTime = sentTime[i];
                sampleSendElapsed = sentTime[i] - firstSentTimeAtSend[i];
                sampleAppLimited = appLimitedAtSend[i];
                sampleTxInFlight = inflightAtSend[i];
                sampleLost = lost - lostAtSend[i];
                firstSentTime = sentTime[i];
            }
            remove(i, pn);
        }
        if (appLimitedUntil != 0 && delivered > appLimitedUntil) {
            appLimitedUntil = 0;
        }
        if (!hasPacket) {
            return;
        }
        sampleDelivered = delivered - samplePriorDelivered;
        sampleAckElapsed = now - samplePriorTime;
        long interval = Math.max(sampleSendElapsed, sampleAckElapsed);
        sampleInterval = interval;
        if (interval <= 0 || sampleDelivered <= 0) {
            return; // same-instant ACK (loopback) or nothing delivered: no sample
        }
        if (minRttNanos > 0 && interval < minRttNanos) {
            return; // shorter than a round trip: ACK compression, not a rate
        }
        double rate = sampleDelivered * 1e9 / interval;
        if (overestimateAvoidance) {
            int c = chooseA0(samplePriorDelivered);
            if (c >= 0 && now > a0Time[c]) {
                // the ACK rate from the end of an earlier aggregation epoch, where it is lower
                rate = Math.min(rate, (delivered - a0Delivered[c]) * 1e9 / (now - a0Time[c]));
            }
        }
        if (!(rate >= 1)) {
            return; // rounds to zero: never a sample
        }
        sampleRate = rate >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) rate;
        rateValid = true;
    }

    /**
     * Turns overestimate avoidance on or off (see the class comment); before the first packet.
     */
    public void setOverestimateAvoidance(boolean on) {
        overestimateAvoidance = on;
    }

    /**
     * The end of an ACK's processing, with the rate (bytes/s) above which ACKs count as
     * aggregated (bbr3: its estimate times its pacing gain, so that STARTUP's ACKs, which
     * arrive at up to 2.77 times an estimate a round behind, are not taken for aggregation):
     * tracks the ACK aggregation epoch and, where a new one starts, keeps the last ACK point
     * before this ACK as an A0 candidate. Does nothing with avoidance off.
     */
    public void onAckEventEnd(long bandwidth, long now) {
        if (!overestimateAvoidance || newlyAcked <= 0) {
            return;
        }
        boolean newEpoch = epochStart == Long.MIN_VALUE
                // a packet sent after the epoch began was acknowledged: a round has passed (quiche)
                || largestAckedPacket > lastSentBeforeEpoch
                || epochBytes <= EPOCH_THRESHOLD * bandwidth * ((now - epochStart) / 1e9);
        if (!newEpoch) {
            epochBytes += newlyAcked;
            return;
        }
        epochStart = now;
        epochBytes = newlyAcked;
        lastSentBeforeEpoch = lastSentPacket;
        if (earlierPointTime != Long.MIN_VALUE) {
            pushA0(earlierPointTime, earlierPointDelivered);
        }
    }

    private void pushA0(long time, long deliveredThen) {
        if (a0Count > 0) {
            int last = (a0First + a0Count - 1) % A0_CANDIDATES;
            if (a0Delivered[last] >= deliveredThen) {
                return; // no newer than the last candidate
            }
        }
        if (a0Count == A0_CANDIDATES) {
            a0First = (a0First + 1) % A0_CANDIDATES;
            a0Count--;
        }
        int i = (a0First + a0Count) % A0_CANDIDATES;
        a0Time[i] = time;
        a0Delivered[i] = deliveredThen;
        a0Count++;
    }

    /**
     * The latest A0 candidate with at most {@code priorDelivered} bytes delivered, dropping the
     * candidates before it (later samples are of later packets); -1 when there is none.
     */
    private int chooseA0(long priorDelivered) {
        while (a0Count > 1 && a0Delivered[(a0First + 1) % A0_CANDIDATES] <= priorDelivered) {
            a0First = (a0First + 1) % A0_CANDIDATES;
            a0Count--;
        }
        if (a0Count == 0 || a0Delivered[a0First] > priorDelivered) {
            return -1;
        }
        return a0First;
    }

    /**
     * Removes a lost packet. Returns whether it was tracked; if so its send state is available
     * from {@link #lostPacketTxInFlight()} and friends until the next call.
     */
    public boolean onPacketLost(long packetNumber, int bytes) {
        int i = indexOf(packetNumber);
        if (i < 0) {
            if (wasSkipped(packetNumber)) {
                lost += Math.max(0, bytes); // untracked for want of room, but lost all the same
            }
            return false; // untracked, or reported twice: counted once, when it was tracked
        }
        lost += size[i];
        lostPacketTxInFlight = inflightAtSend[i];
        lostPacketLostSinceSend = lost - lostAtSend[i];
        lostPacketAppLimited = appLimitedAtSend[i];
        lostPacketDeliveredAtSend = deliveredAtSend[i];
        remove(i, packetNumber);
        return true;
    }

    /** Forgets a packet without counting it delivered or lost (e.g. a discarded packet number space). */
    public void onPacketDiscarded(long packetNumber) {
        int i = indexOf(packetNumber);
        if (i >= 0) {
            remove(i, packetNumber);
        }
    }

    // ---------------------------------------------------------------- connection state

    /** Bytes delivered (acknowledged) so far. */
    public long delivered() {
        return delivered;
    }

    /** Bytes lost so far. */
    public long lost() {
        return lost;
    }

    /** Time of the most recent delivery. */
    public long deliveredTime() {
        return deliveredTime;
    }

    public long lastSentPacket() {
        return lastSentPacket;
    }

    public long largestAckedPacket() {
        return largestAckedPacket;
    }

    // ---------------------------------------------------------------- last ACK's sample

    /** Whether the last ACK acknowledged at least one tracked packet. */
    public boolean hasPacket() {
        return hasPacket;
    }

    /** Whether the last ACK produced a usable (positive, finite) rate sample. */
    public boolean hasRateSample() {
        return rateValid;
    }

    /** The last ACK's delivery rate in bytes per second, or 0 when it gave none. */
    public long sampleRate() {
        return sampleRate;
    }

    /** Bytes delivered over the sample's interval. */
    public long sampleDelivered() {
        return sampleDelivered;
    }

    /** The sample's interval, max(send elapsed, ack elapsed), nanoseconds (may be ≤ 0: no sample). */
    public long sampleInterval() {
        return sampleInterval;
    }

    /** Delivered count when the sampled packet was sent (for round counting). */
    public long samplePriorDelivered() {
        return samplePriorDelivered;
    }

    /** Send time of the sampled (newest) packet. */
    public long sampleSentTime() {
        return sampleSentTime;
    }

    /** Whether the sampled packet was sent while application limited. */
    public boolean sampleAppLimited() {
        return sampleAppLimited;
    }

    /** Bytes in flight when the sampled packet was sent (including it). */
    public long sampleTxInFlight() {
        return sampleTxInFlight;
    }

    /** Bytes lost between the sampled packet's send and this ACK. */
    public long sampleLost() {
        return sampleLost;
    }

    /** Bytes newly acknowledged by the last ACK (tracked packets only). */
    public long newlyAcked() {
        return newlyAcked;
    }

    // ---------------------------------------------------------------- last lost packet

    public long lostPacketTxInFlight() {
        return lostPacketTxInFlight;
    }

    public long lostPacketLostSinceSend() {
        return lostPacketLostSinceSend;
    }

    public boolean lostPacketAppLimited() {
        return lostPacketAppLimited;
    }

    public long lostPacketDeliveredAtSend() {
        return lostPacketDeliveredAtSend;
    }
}
