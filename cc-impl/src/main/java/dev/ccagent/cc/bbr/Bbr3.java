package dev.ccagent.cc.bbr;

import dev.ccagent.cc.AckEvent;
import dev.ccagent.cc.AlgorithmDescriptor;
import dev.ccagent.cc.CcOptions;
import dev.ccagent.cc.CcSnapshot;
import dev.ccagent.cc.CongestionMode;
import dev.ccagent.cc.LossEvent;
import dev.ccagent.cc.OptionSpec;

/**
 * BBR version 3, after the IETF draft draft-ietf-ccwg-bbr and picoquic's {@code picoquic/bbr.c}
 * (its default controller); written for this project, not translated.
 *
 * <ul>
 *   <li><b>STARTUP</b>: pacing gain 2.77 (4 ln 2), cwnd gain 2. Left on full bandwidth (growth
 *       below 25% for 3 rounds) or on loss: a loss round in which losses exceeded the
 *       {@value #LOSS_THRESH} threshold in at least {@value #STARTUP_FULL_LOSS_COUNT} separate
 *       ranges; inflight_hi is then set from the BDP and the last round's delivery.</li>
 *   <li><b>DRAIN</b>: pacing gain {@value #DRAIN_PACING_GAIN} until in flight ≤ BDP.</li>
 *   <li><b>PROBE_BW</b>: DOWN (pacing 0.90) until in flight ≤ BDP and below the headroom, then
 *       CRUISE (1.0) leaving {@value #HEADROOM} of inflight_hi free; after a random 2–3 s or
 *       min(BDP in packets, 63) rounds (Reno coexistence), REFILL (1.0, one round, lower bounds
 *       reset), then UP (1.25, cwnd gain 2.25, inflight_hi probed upward with a slope that doubles
 *       each round) until the delivery rate stopped growing (three rounds below +25%, unless
 *       inflight_hi is what limits it), or losses become too high.</li>
 *   <li><b>Loss response</b>: a sample whose losses exceed {@value #LOSS_THRESH} of its
 *       in-flight bytes is "inflight too high": in UP, for packets sent in UP, inflight_hi =
 *       max(tx_in_flight at the threshold crossing, {@value #BETA}·target). In DRAIN and PROBE_RTT
 *       each round with loss lowers bw_lo and inflight_lo to max(latest round's delivery,
 *       {@value #BETA}× previous); in PROBE_BW DOWN/CRUISE only a round whose losses exceed
 *       {@value #LOSS_THRESH} of the round and {@value #EXCESS_LOSS_MIN_PACKETS} packets does (the
 *       draft: any loss; ngtcp2's bbr2: never), so random loss below the threshold does not
 *       ratchet the rate down. The model bandwidth is min(max filter (bw_hi, 2 probe cycles),
 *       bw_lo).</li>
 *   <li><b>PROBE_RTT</b>: every {@value BbrBase#PROBE_RTT_INTERVAL} (5 s) without a lower RTT,
 *       cwnd = max(0.5·BDP, 4 packets) for 200 ms and one round.</li>
 * </ul>
 * Recovery (draft "Modulating cwnd in Loss Recovery", Linux v3): entering fast recovery only saves
 * the window, restored when a packet sent after the first loss is acknowledged; persistent
 * congestion (QUIC's RTO) cuts it to what is in flight plus one packet.
 */
public final class Bbr3 extends BbrBase {

    public static final String NAME = "bbr3";

    public static final double STARTUP_PACING_GAIN = 2.77;
    public static final double STARTUP_CWND_GAIN = 2.0;
    /** Latest draft: BBR.DrainPacingGain = 0.5 (1 / BBRStartupCwndGain). */
    public static final double DRAIN_PACING_GAIN = 0.5;
    public static final double DEFAULT_CWND_GAIN = 2.0;
    public static final double DOWN_PACING_GAIN = 0.90;
    public static final double CRUISE_PACING_GAIN = 1.0;
    public static final double REFILL_PACING_GAIN = 1.0;
    public static final double UP_PACING_GAIN = 1.25;
    public static final double UP_CWND_GAIN = 2.25;
    public static final double PROBE_RTT_CWND_GAIN = 0.5;
    public static final double LOSS_THRESH = 0.02;
    public static final double BETA = 0.7;
    public static final double HEADROOM = 0.15;
    /** Pacing margin: pace 1% below the estimate (draft BBRPacingMarginPercent). */
    public static final double PACING_MARGIN = 0.01;
    public static final int STARTUP_FULL_LOSS_COUNT = 6;
    /**
     * In PROBE_BW a loss round lowers bw_lo/inflight_lo only if its losses exceed
     * {@value #LOSS_THRESH} of what the round delivered and lost and more than this many packets
     * (the minimum of picoquic's {@code IsInflightTooHigh}, {@code picoquic/bbr.c}:
     * {@code rs->lost > 3 * path_x->send_mtu}).
     */
    public static final int EXCESS_LOSS_MIN_PACKETS = 3;
    public static final long MIN_RTT_FILTER_NANOS = 10_000_000_000L;
    public static final int RENO_PROBE_ROUND_LIMIT = 63;
    public static final long PROBE_WAIT_BASE_NANOS = 2_000_000_000L;
    public static final long PROBE_WAIT_RANDOM_NANOS = 1_000_000_000L;
    /** Cap of extra_acked in time at the bandwidth estimate (Linux bbr_extra_acked_max_us, 100 ms). */
    public static final long EXTRA_ACKED_MAX_NANOS = 100_000_000L;
    /** DRAIN ends after this many rounds at the latest (draft CheckDrainDone, drain_start_round + 3). */
    public static final int DRAIN_MAX_ROUNDS = 3;

    public static final AlgorithmDescriptor DESCRIPTOR = new AlgorithmDescriptor(NAME,
            "BBRv3 (draft-ietf-ccwg-bbr / picoquic): model-based, loss-aware, DOWN/CRUISE/REFILL/UP",
            bbrOptions("5s", OptionSpec.bool(BbrBase.OVERESTIMATE_AVOIDANCE, "on",
                    "rate samples at most the ACK rate from the end of the previous ACK aggregation epoch, so that bursts of ACKs do not inflate the bandwidth estimate (after quiche's choose_a0_point)")),
            Bbr3::new);

    private enum AckPhase { INIT, PROBE_STARTING, PROBE_STOPPING, REFILLING, PROBE_FEEDBACK }

    private static final long UNSET = Long.MAX_VALUE;
    /**
     * The first packet sent in PROBE_BW_UP: only packets from this one on can show that the probe
     * itself went too high.
     */
    private long probeUpFirstPacket;

    /** bw_hi: windowed max of delivery rates over the current and previous probe cycle. */
    private final WindowedFilter maxBandwidth = WindowedFilter.max(1);
    private long cycleCount;
    /** probe_rtt_min_delay with its 5 s expiry. */
    private final MinRttFilter probeRttMin;
    private long minRtt;
    private long minRttStamp;

    private long bw;
    private long bwLo = UNSET;
    private long inflightHi = UNSET;
    private long inflightLo = UNSET;
    private long bwLatest;
    private long inflightLatest;
    private long lossRoundDelivered;
    /** Delivered bytes when the current loss round's first loss was seen. */
    private long lossRoundFirstDelivered;
    /** Bytes lost since the current loss round's first loss. */
    private long lostBytesInLossRound;
    private boolean lossRoundStart;
    private boolean lossInRound;

    private boolean filledPipe;
    private long fullBw;
    private int fullBwCount;
    private boolean fullBwNow;
    private int lossRangesInRound;
    private boolean startupTooHighInRound;
    private long lastLostPacket = Long.MIN_VALUE;

    private boolean probeRttExpired;
    private long probeRttDoneStamp = UNSET;
    private boolean probeRttRoundDone;
    private boolean idleRestart;
    private long priorCwnd;

    private long cycleStamp;
    private long bwProbeWait;
    private long roundsSinceBwProbe;
    private long bwProbeUpCnt = UNSET;
    private long bwProbeUpAcks;
    private int bwProbeUpRounds;
    private boolean bwProbeSamples;
    private AckPhase ackPhase = AckPhase.INIT;

    private boolean inRecovery;
    private long recoveryEndPacket = -1;
    /** The last probe ended with losses too high (draft/Linux prev_probe_too_high). */
    private boolean prevProbeTooHigh;
    /** The last UP stopped at inflight_hi as a precaution (draft prev_probe_precautionary, Linux stopped_risky_probe). */
    private boolean prevProbePrecautionary;
    /** Round count when DRAIN began (draft BBR.drain_start_round). */
    private long drainStartRound;

    public Bbr3(CcOptions options) {
        super(options, STARTUP_PACING_GAIN, STARTUP_CWND_GAIN);
        this.probeRttMin = new MinRttFilter(probeRttIntervalNanos, lenientLowRtt);
        sampler.setOverestimateAvoidance(options.getBoolean(OVERESTIMATE_AVOIDANCE));
    }

    // ------------------------------------------------------------------ model

    @Override
    public long minRtt() {
        return minRtt;
    }

    /** The max filter (bw_hi); what snapshots report as the bandwidth estimate. */
    @Override
    public long bandwidthEstimate() {
        return maxBandwidth.best();
    }

    /** The bandwidth the model uses: min(bw_hi, bw_lo). */
    public long modelBandwidth() {
        return bw;
    }

    @Override
    public long congestionWindow() {
        return cwnd;
    }

    private long bdpMultiple(long bandwidth, double gain) {
        if (minRtt <= 0) {
            return (long) (gain * initialWindow);
        }
        return bdp(bandwidth, gain);
    }

    private long quantizationBudget(long inflight) {
        long v = Math.max(inflight, 3 * sendQuantum());
        v = Math.max(v, minCwnd);
        if (mode == CongestionMode.PROBE_BW_UP) {
            v += 2L * mss;
        }
        return v;
    }

    private long inflightWithBw(long bandwidth, double gain) {
        return quantizationBudget(bdpMultiple(bandwidth, gain));
    }

    private long inflightWithHeadroom() {
        if (inflightHi == UNSET) {
            return UNSET;
        }
        return Math.max((long) ((1.0 - HEADROOM) * inflightHi), minCwnd);
    }

    private long targetInflight() {
        long b = bdp(bw, 1.0);
        return b > 0 ? Math.min(b, cwnd) : cwnd;
    }

    private long probeRttCwnd() {
        return Math.max(bdpMultiple(bw, PROBE_RTT_CWND_GAIN), minCwnd);
    }

    private boolean isInflightTooHigh(long lostSinceSend, long txInFlight) {
        return lostSinceSend > 0 && lostSinceSend > txInFlight * LOSS_THRESH;
    }

    private boolean inProbeBw() {
        return mode.isProbeBw();
    }

    /** STARTUP, REFILL and UP probe for bandwidth; the lower bounds do not apply there. */
    private boolean isProbingBw() {
        return mode == CongestionMode.STARTUP || mode == CongestionMode.PROBE_BW_REFILL
                || mode == CongestionMode.PROBE_BW_UP;
    }

    // ------------------------------------------------------------------ events

    @Override
    protected void onAckProcessed(AckEvent ack, boolean roundStart, long rtt) {
        long now = ack.timeNanos;
        long acked = ack.totalBytes();

        if (inRecovery && sampler.hasPacket() && sampler.largestAckedPacket() > recoveryEndPacket) {
            inRecovery = false;
            cwnd = Math.max(cwnd, priorCwnd); // the draft's RestoreCwnd()
        }
        if (roundStart && inProbeBw()) {
            roundsSinceBwProbe++;
        }

        updateLatestDeliverySignals();
        updateCongestionSignals();
        // draft UpdateACKAggregation(): a 1-round window in STARTUP, 10 rounds after.
        ackAggregation.setWindowRounds(filledPipe ? EXTRA_ACKED_ROUNDS : 1);
        ackAggregation.onAck(bw, now, acked, rounds.count(), cwnd);
        // ACKs faster than the pacing gain allows are aggregation: in STARTUP they legitimately arrive
        // at up to 2.77x an estimate a round behind. With the estimate alone, STARTUP's epochs lasted a
        // round, samples averaged over two, and bbr3 lost 5-12% of its goodput at 2% random loss in the
        // simulator (seeds 1-3, 20 and 50 Mbit/s); with a0 kept out of STARTUP instead, STARTUP's own
        // overestimate (12.1 Mbit/s on a 10 Mbit/s link) stayed in bw_hi for 10 s behind a full buffer.
        sampler.onAckEventEnd((long) (maxBandwidth.best() * Math.max(1.0, pacingGain)), now);
        checkFullBwReached(roundStart);
        checkStartupDone(roundStart);
        checkDrain(now);
        updateProbeBwCyclePhase(now, roundStart, acked, rtt);
        updateMinRtt(rtt, now);
        checkProbeRtt(now, roundStart);
        advanceLatestDeliverySignals();
        boundBwForModel();

        setPacingRate(pacingGain);
        setCwnd(acked);
    }

    private void updateLatestDeliverySignals() {
        lossRoundStart = false;
        if (!sampler.hasPacket()) {
            return;
        }
        if (sampler.hasRateSample()) {
            bwLatest = Math.max(bwLatest, sampler.sampleRate());
        }
        inflightLatest = Math.max(inflightLatest, sampler.sampleDelivered());
        if (sampler.samplePriorDelivered() >= lossRoundDelivered) {
            lossRoundDelivered = sampler.delivered();
            lossRoundStart = true;
        }
    }

    private void advanceLatestDeliverySignals() {
        if (lossRoundStart) {
            bwLatest = sampler.hasRateSample() ? sampler.sampleRate() : 0;
            inflightLatest = sampler.sampleDelivered();
        }
    }

    private void updateCongestionSignals() {
        if (sampler.hasRateSample()) {
            long rate = sampler.sampleRate();
            if (rate >= maxBandwidth.best() || !sampler.sampleAppLimited()) {
                maxBandwidth.update(rate, cycleCount);
            }
        }
        if (!lossRoundStart) {
            return;
        }
        boolean lowerBounds = lossInRound && !isProbingBw();
        if (lowerBounds && inProbeBw()) {
            // Once per round with loss the draft lowers the short-term bounds, in DOWN/CRUISE on
            // any loss. Since bw_latest can be no more than the sending rate (bw_lo less the 1%
            // pacing margin), random loss ratchets the rate down round after round (issue #26:
            // 481 of 947 rounds cut bw_lo in one 60 s run, cruise 19.7 -> 15.5 Mbit/s on a
            // 20 Mbit/s link). ngtcp2's bbr2 (ngtcp2/ngtcp2 lib/ngtcp2_bbr2.c,
            // bbr_adapt_lower_bounds_from_congestion) applies no lower bound in any PROBE_BW
            // state and keeps 18.5 of 20 Mbit/s at 1-2% loss. Here a DOWN/CRUISE round cuts only
            // when its own losses are excessive by the same measure that judges a probe: above
            // LOSS_THRESH of the round and more than 3 packets. Without any cut (ngtcp2) two bbr3
            // flows, the second starting 2 s later, reached Jain 0.855 over 20-40 s instead of
            // 0.967 (BbrAcceptanceTest.twoFlowsShareFairly, bound 0.9). Fairness is pinned by
            // RandomLossGoodputAndFairnessTest.
            long delivered = sampler.delivered() - lossRoundFirstDelivered;
            lowerBounds = lostBytesInLossRound > (long) EXCESS_LOSS_MIN_PACKETS * mss
                    && lostBytesInLossRound > LOSS_THRESH * (delivered + lostBytesInLossRound);
        }
        if (lowerBounds) {
            if (bwLo == UNSET) {
                bwLo = maxBandwidth.best();
            }
            if (inflightLo == UNSET) {
                inflightLo = cwnd; // draft InitLowerBounds(): fast recovery no longer cuts cwnd
            }
            bwLo = Math.max(bwLatest, (long) (BETA * bwLo));
            inflightLo = Math.max(inflightLatest, (long) (BETA * inflightLo));
        }
        lossInRound = false;
        lostBytesInLossRound = 0;
    }

    private void boundBwForModel() {
        bw = Math.min(maxBandwidth.best(), bwLo);
    }

    @Override
    protected void onLostPacket(long packetNumber, int bytes, boolean tracked, long now) {
        if (!lossInRound) {
            // draft NoteLoss(): the loss round starts at the first loss, so the round whose
            // delivery bw_latest/inflight_latest describe is the one the loss happened in.
            lossRoundDelivered = sampler.delivered();
            lossRoundFirstDelivered = lossRoundDelivered;
            lostBytesInLossRound = 0;
        }
        lossInRound = true;
        lostBytesInLossRound += bytes;
        if (packetNumber != lastLostPacket + 1) {
            lossRangesInRound++;
        }
        lastLostPacket = packetNumber;
        if (!tracked) {
            return;
        }
        long tx = sampler.lostPacketTxInFlight();
        long lost = sampler.lostPacketLostSinceSend();
        boolean tooHigh = isInflightTooHigh(lost, tx);
        if (mode == CongestionMode.STARTUP && tooHigh) {
            startupTooHighInRound = true;
        }
        if (bwProbeSamples && tooHigh && packetNumber >= probeUpFirstPacket) {
            handleInflightTooHigh(inflightHiFromLostPacket(tx, lost, bytes),
                    sampler.lostPacketAppLimited(), now);
        }
    }

    /**
     * The in-flight level at which the losses crossed the threshold: draft-ietf-ccwg-bbr
     * {@code InflightAtLoss(P)}, lost_prefix = (LossThresh·inflight_prev − lost_prev) / (1 − LossThresh),
     * inflight_at_loss = inflight_prev + lost_prefix. (Before issue #15 the threshold multiplied
     * inflight_prev − lost_prev, which is not the draft's solution of
     * (lost_prev + x) / (inflight_prev + x) ≥ LossThresh.)
     */
    private static long inflightHiFromLostPacket(long txInFlight, long lost, int size) {
        long inflightPrev = Math.max(0, txInFlight - size);
        long lostPrev = Math.max(0, lost - size);
        double lostPrefix = (LOSS_THRESH * inflightPrev - lostPrev) / (1.0 - LOSS_THRESH);
        return inflightPrev + Math.max(0, (long) lostPrefix);
    }

    private void handleInflightTooHigh(long txInFlight, boolean appLimited, long now) {
        prevProbeTooHigh = true; // draft HandleInflightTooHigh(), Linux bbr_handle_inflight_too_high
        bwProbeSamples = false; // react once per probe
        if (!appLimited) {
            inflightHi = Math.max(txInFlight, (long) (targetInflight() * BETA));
        }
        if (mode == CongestionMode.PROBE_BW_UP) {
            startProbeBwDown(now);
        }
    }

    @Override
    protected void onLossProcessed(LossEvent loss, long lostBytes) {
        if (loss.count() == 0 && !loss.persistentCongestion) {
            return;
        }
        // draft-ietf-ccwg-bbr "Modulating cwnd in Loss Recovery" (OnEnterFastRecovery /
        // OnEnterRTO) and Linux tcp_bbr.c v3: entering fast recovery only saves the window
        // (SaveCwnd), restored when recovery ends; the loss itself shapes the model through
        // bw_lo/inflight_lo and inflight_hi. Only persistent congestion (QUIC's RTO) cuts the
        // window to what is in flight plus one packet. Before issue #15 every first loss cut
        // to in-flight + 1 packet with packet conservation for a round (BBRv1 behaviour).
        if (!inRecovery) {
            priorCwnd = saveCwnd();
            inRecovery = true;
            congestionEvents++;
            recoveryEndPacket = sampler.lastSentPacket(); // RFC 9002 §7.3.2 recovery period
        }
        if (loss.persistentCongestion) {
            priorCwnd = saveCwnd();
            cwnd = Math.max(bytesInFlight + mss, minCwnd);
            recoveryEndPacket = sampler.lastSentPacket();
        }
        if (mode == CongestionMode.PROBE_RTT) {
            cwnd = Math.min(cwnd, probeRttCwnd());
        }
    }

    private long saveCwnd() {
        if (!inRecovery && mode != CongestionMode.PROBE_RTT) {
            return cwnd;
        }
        return Math.max(priorCwnd, cwnd);
    }

    @Override
    protected void onRestartFromIdle(long now) {
        idleRestart = true;
        ackAggregation.restartEpoch(now);
        if (inProbeBw()) {
            setPacingRate(1.0);
            updatePacer();
        } else if (mode == CongestionMode.PROBE_RTT) {
            checkProbeRttDone(now);
        }
    }

    // ------------------------------------------------------------------ STARTUP and DRAIN

    /**
     * The draft's {@code BBRCheckFullBWReached}: once per round, a delivery rate at least 25% above
     * the baseline resets the count; three rounds without such growth mean the pipe is full
     * ({@code full_bw_now}). Used to leave STARTUP and to end PROBE_BW_UP.
     */
    private void checkFullBwReached(boolean roundStart) {
        if (fullBwNow || !roundStart || !sampler.hasPacket() || sampler.sampleAppLimited()) {
            return;
        }
        long rate = sampler.sampleRate();
        if (rate >= fullBw * 1.25) {
            resetFullBw();
            fullBw = rate; // still growing: new baseline
            return;
        }
        fullBwCount++;
        fullBwNow = fullBwCount >= 3;
        if (fullBwNow) {
            filledPipe = true;
        }
    }

    private void resetFullBw() {
        fullBw = 0;
        fullBwCount = 0;
        fullBwNow = false;
    }

    private void checkStartupDone(boolean roundStart) {
        if (mode != CongestionMode.STARTUP) {
            return;
        }
        if (lossRoundStart) {
            if (!filledPipe && startupTooHighInRound && lossRangesInRound >= STARTUP_FULL_LOSS_COUNT) {
                filledPipe = true;
                inflightHi = Math.max(bdpMultiple(maxBandwidth.best(), 1.0), inflightLatest);
            }
            startupTooHighInRound = false;
            lossRangesInRound = 0;
        }
        if (filledPipe) {
            markStartupExit(sampler.deliveredTime());
            enterDrain();
        }
    }

    /** draft EnterDrain(): pacing gain 0.5, cwnd gain 2, remember the round. */
    private void enterDrain() {
        setMode(CongestionMode.DRAIN, DRAIN_PACING_GAIN, DEFAULT_CWND_GAIN);
        drainStartRound = rounds.count();
    }

    /**
     * draft CheckDrainDone() (latest revision): leave DRAIN once in flight ≤ the BDP, or after
     * {@value #DRAIN_MAX_ROUNDS} rounds at the latest, since a queue built by competing flows
     * cannot be drained by this one alone.
     */
    private void checkDrain(long now) {
        if (mode == CongestionMode.DRAIN
                && (bytesInFlight <= inflightWithBw(bw > 0 ? bw : maxBandwidth.best(), 1.0)
                || rounds.count() > drainStartRound + DRAIN_MAX_ROUNDS)) {
            startProbeBwDown(now); // the queue is estimated drained
        }
    }

    // ------------------------------------------------------------------ PROBE_BW

    private void updateProbeBwCyclePhase(long now, boolean roundStart, long acked, long rtt) {
        if (!filledPipe) {
            return;
        }
        if (adaptUpperBounds(now, roundStart, acked)) {
            return;
        }
        if (!inProbeBw()) {
            return;
        }
        switch (mode) {
            case PROBE_BW_DOWN:
                if (checkTimeToProbeBw(now)) {
                    return;
                }
                if (checkPathSaturated(rtt)) {
                    return;
                }
                if (checkTimeToCruise()) {
                    startProbeBwCruise();
                }
                break;
            case PROBE_BW_CRUISE:
                if (checkPathSaturated(rtt)) {
                    return;
                }
                checkTimeToProbeBw(now);
                break;
            case PROBE_BW_REFILL:
                if (roundStart) {
                    bwProbeSamples = true;
                    startProbeBwUp(now);
                }
                break;
            case PROBE_BW_UP:
                if (checkTimeToGoDown(acked)) {
                    prevProbeTooHigh = false; // no high loss (yet)
                    startProbeBwDown(now);
                }
                break;
            default:
                break;
        }
    }

    /** @return whether it decided a state transition (draft AdaptLongTermModel). */
    private boolean adaptUpperBounds(long now, boolean roundStart, long acked) {
        if (ackPhase == AckPhase.PROBE_STARTING && roundStart) {
            ackPhase = AckPhase.PROBE_FEEDBACK; // samples from the probe begin to arrive
        }
        if (ackPhase == AckPhase.PROBE_STOPPING && roundStart) {
            // The probe's samples are in: this is the moment to forget the previous cycle's
            // samples (advance the max filter), once per probe cycle.
            bwProbeSamples = false;
            ackPhase = AckPhase.INIT;
            if (inProbeBw() && !sampler.sampleAppLimited()) {
                cycleCount++;
            }
            // Precautionary probing, acceleration (draft AdaptLongTermModel; Linux
            // bbr_adapt_upper_bounds with stopped_risky_probe): the precautionary probe's feedback
            // showed no excess loss, so probe again at once, this time holding inflight_hi.
            if (inProbeBw() && prevProbePrecautionary && !prevProbeTooHigh) {
                startProbeBwRefill();
                return true;
            }
        }
        if (!sampler.hasPacket()) {
            return false;
        }
        if (isInflightTooHigh(sampler.sampleLost(), sampler.sampleTxInFlight())) {
            if (bwProbeSamples && sampler.largestAckedPacket() >= probeUpFirstPacket) {
                handleInflightTooHigh(sampler.sampleTxInFlight(), sampler.sampleAppLimited(), now);
            }
            return false;
        }
        if (inflightHi == UNSET) {
            return false;
        }
        if (sampler.sampleTxInFlight() > inflightHi) {
            inflightHi = sampler.sampleTxInFlight();
        }
        if (mode == CongestionMode.PROBE_BW_UP) {
            probeInflightHiUpward(acked, roundStart);
        }
        return false;
    }

    private void probeInflightHiUpward(long acked, boolean roundStart) {
        boolean cwndLimited = cwndLimitedInRound || bytesInFlight + acked >= cwnd;
        if (!cwndLimited || cwnd < inflightHi) {
            return; // not using inflight_hi fully: no reason to raise it
        }
        bwProbeUpAcks += acked;
        if (bwProbeUpCnt != UNSET && bwProbeUpAcks >= bwProbeUpCnt * mss) {
            long delta = bwProbeUpAcks / bwProbeUpCnt;
            bwProbeUpAcks -= delta * bwProbeUpCnt;
            inflightHi += delta;
        }
        if (roundStart) {
            raiseInflightHiSlope();
        }
    }

    private void raiseInflightHiSlope() {
        long growthThisRound = (long) mss << bwProbeUpRounds;
        bwProbeUpRounds = Math.min(bwProbeUpRounds + 1, 30);
        bwProbeUpCnt = Math.max(cwnd / growthThisRound, 1);
    }

    /** The draft's {@code BBRCheckTimeToGoDown}: UP ends once the bandwidth stopped growing. */
    private boolean checkTimeToGoDown(long acked) {
        // Precautionary probing, deceleration: after a probe that went too high, stop as soon as
        // in flight reaches inflight_hi (draft IsTimeToGoDown; Linux stopped_risky_probe).
        if (prevProbeTooHigh && inflightHi != UNSET && bytesInFlight >= inflightHi) {
            prevProbePrecautionary = true;
            return true;
        }
        boolean cwndLimited = cwndLimitedInRound || bytesInFlight + acked >= cwnd;
        if (cwndLimited && inflightHi != UNSET && cwnd >= inflightHi) {
            // limited by inflight_hi, not by the path: keep probing (inflight_hi grows)
            resetFullBw();
            fullBw = sampler.sampleRate();
        } else {
            return fullBwNow;
        }
        return false;
    }

    /**
     * The data-rate sanity check where picoquic applies it ({@code BBRCheckPathSaturated} in
     * {@code picoquic/bbr.c}, called from {@code BBRUpdateProbeBWCyclePhase} in the DOWN and CRUISE
     * cases only): not while probing (UP/REFILL, where pacing above the delivery rate is the point),
     * only once at least one round has passed since the probe ({@code rounds_since_bw_probe >= 1}),
     * and it does not just reset the max filter but enters DRAIN so the queue it found is drained.
     * Before (issue #15): every PROBE_BW phase, no round guard, filter reset only; bbr3 vs CUBIC in
     * an 8-BDP buffer got 10.4 of 50 Mbit/s.
     */
    private boolean checkPathSaturated(long rtt) {
        if (roundsSinceBwProbe < 1 || !deliveryRateInsane(rtt)) {
            return false;
        }
        long rate = sampler.sampleRate();
        maxBandwidth.reset(rate, cycleCount);
        fullBw = rate;
        ackPhase = AckPhase.PROBE_STOPPING;
        rounds.startRoundNow(sampler.delivered());
        enterDrain();
        bw = Math.min(maxBandwidth.best(), bwLo);
        return true;
    }

    private boolean checkTimeToCruise() {
        if (bytesInFlight > inflightWithHeadroom()) {
            return false; // not enough headroom yet
        }
        return bytesInFlight <= inflightWithBw(maxBandwidth.best(), 1.0);
    }

    private boolean checkTimeToProbeBw(long now) {
        if (now - cycleStamp > bwProbeWait || isRenoCoexistenceProbeTime()) {
            startProbeBwRefill();
            return true;
        }
        return false;
    }

    private boolean isRenoCoexistenceProbeTime() {
        long renoRounds = Math.min(targetInflight() / mss, RENO_PROBE_ROUND_LIMIT);
        return roundsSinceBwProbe >= renoRounds;
    }

    private void pickProbeWait() {
        roundsSinceBwProbe = random.nextInt(2); // 0 or 1
        bwProbeWait = PROBE_WAIT_BASE_NANOS + random.nextLong(PROBE_WAIT_RANDOM_NANOS + 1);
    }

    private void startProbeBwDown(long now) {
        if (mode == CongestionMode.STARTUP || mode == CongestionMode.DRAIN) {
            markStartupExit(now);
        }
        // reset congestion signals
        lossInRound = false;
        bwLatest = 0;
        inflightLatest = 0;
        bwProbeUpCnt = UNSET;
        pickProbeWait();
        cycleStamp = now;
        ackPhase = AckPhase.PROBE_STOPPING;
        rounds.startRoundNow(sampler.delivered());
        setMode(CongestionMode.PROBE_BW_DOWN, DOWN_PACING_GAIN, DEFAULT_CWND_GAIN);
    }

    private void startProbeBwCruise() {
        setMode(CongestionMode.PROBE_BW_CRUISE, CRUISE_PACING_GAIN, DEFAULT_CWND_GAIN);
    }

    private void startProbeBwRefill() {
        bwLo = UNSET; // reset lower bounds
        inflightLo = UNSET;
        bwProbeUpRounds = 0;
        bwProbeUpAcks = 0;
        prevProbePrecautionary = false;
        ackPhase = AckPhase.REFILLING;
        rounds.startRoundNow(sampler.delivered());
        setMode(CongestionMode.PROBE_BW_REFILL, REFILL_PACING_GAIN, DEFAULT_CWND_GAIN);
    }

    private void startProbeBwUp(long now) {
        // Losses of packets sent before UP (in REFILL, at the cruise level) say nothing about
        // whether the probe went too high: Linux tcp_bbr.c (v3) bbr_skb_marked_lost means to
        // judge "an skb sent while probing for bandwidth" and quiche marks samples as
        // is_sample_from_probing only from enter_probe_up. The draft (and Linux, ngtcp2) count
        // every loss seen after REFILL's round, so 4 random losses of REFILL packets (1% loss,
        // ~100 in flight) ended UP within 30 ms and set inflight_hi to about one BDP, which with
        // the 15% headroom held cruise below the BDP (issue #26).
        probeUpFirstPacket = sampler.lastSentPacket() + 1;
        ackPhase = AckPhase.PROBE_STARTING;
        rounds.startRoundNow(sampler.delivered());
        resetFullBw();
        fullBw = sampler.sampleRate();
        cycleStamp = now;
        setMode(CongestionMode.PROBE_BW_UP, UP_PACING_GAIN, UP_CWND_GAIN);
        raiseInflightHiSlope();
    }

    // ------------------------------------------------------------------ PROBE_RTT

    private void updateMinRtt(long rtt, long now) {
        boolean expired = probeRttMin.update(rtt, now);
        probeRttExpired = expired || (rtt <= 0 && probeRttMin.isExpiredAt(now));
        long probeMin = probeRttMin.value();
        if (probeMin <= 0) {
            return;
        }
        boolean minRttExpired = now - minRttStamp > MIN_RTT_FILTER_NANOS;
        if (minRtt == 0 || probeMin < minRtt || minRttExpired) {
            minRtt = probeMin;
            minRttStamp = probeRttMin.stamp();
        } else if (probeMin <= minRtt) {
            minRttStamp = Math.max(minRttStamp, probeRttMin.stamp());
        }
    }

    private void checkProbeRtt(long now, boolean roundStart) {
        if (mode != CongestionMode.PROBE_RTT && probeRttExpired && !idleRestart) {
            if (mode == CongestionMode.STARTUP) {
                markStartupExit(now);
            }
            priorCwnd = saveCwnd();
            setMode(CongestionMode.PROBE_RTT, 1.0, PROBE_RTT_CWND_GAIN);
            probeRttDoneStamp = UNSET;
            ackPhase = AckPhase.PROBE_STOPPING;
            rounds.startRoundNow(sampler.delivered());
            probeRttCount++;
        }
        if (mode == CongestionMode.PROBE_RTT) {
            handleProbeRtt(now, roundStart);
        }
        if (sampler.sampleDelivered() > 0) {
            idleRestart = false;
        }
    }

    private void handleProbeRtt(long now, boolean roundStart) {
        sampler.onAppLimited(bytesInFlight); // samples now say nothing about the bottleneck
        if (probeRttDoneStamp == UNSET && bytesInFlight <= probeRttCwnd()) {
            probeRttDoneStamp = now + probeRttDurationNanos;
            probeRttRoundDone = false;
            rounds.startRoundNow(sampler.delivered());
        } else if (probeRttDoneStamp != UNSET) {
            if (roundStart) {
                probeRttRoundDone = true;
            }
            if (probeRttRoundDone) {
                checkProbeRttDone(now);
            }
        }
    }

    private void checkProbeRttDone(long now) {
        if (probeRttDoneStamp != UNSET && now >= probeRttDoneStamp) {
            probeRttMin.refresh(now); // schedule the next PROBE_RTT
            probeRttExpired = false;
            cwnd = Math.max(cwnd, priorCwnd);
            bwLo = UNSET;
            inflightLo = UNSET;
            if (filledPipe) {
                startProbeBwDown(now);
                startProbeBwCruise();
            } else {
                enterStartup();
            }
        }
    }

    // ------------------------------------------------------------------ control

    private void setPacingRate(double gain) {
        long bandwidth = bw;
        if (bandwidth <= 0) {
            pacingRateTarget = 0; // no estimate yet: the pacer's fallback
            return;
        }
        long rate = scale(gain * (1.0 - PACING_MARGIN), bandwidth);
        if (filledPipe) {
            pacingRateTarget = rate;
        } else {
            pacingRateTarget = Math.max(rate, Math.max(pacingRateTarget, fallbackRate()));
        }
    }

    /**
     * extra_acked capped at bw × 100 ms (Linux tcp_bbr.c {@code bbr_extra_acked_max_us}, applied in
     * {@code bbr_ack_aggregation_cwnd}): one burst of compressed ACKs must not buy a window of
     * seconds.
     */
    private long extraAckedCapped() {
        long extra = ackAggregation.extraAcked();
        long b = bw > 0 ? bw : maxBandwidth.best();
        if (b > 0) {
            extra = Math.min(extra, saturate(b * (EXTRA_ACKED_MAX_NANOS / 1e9)));
        }
        return extra;
    }

    private void setCwnd(long acked) {
        long maxInflight = quantizationBudget(bdpMultiple(bw, cwndGain) + extraAckedCapped());
        if (filledPipe) {
            cwnd = Math.min(cwnd + acked, maxInflight);
        } else if (cwnd < maxInflight || sampler.delivered() < initialWindow) {
            cwnd += acked;
        }
        cwnd = Math.max(cwnd, minCwnd);
        if (mode == CongestionMode.PROBE_RTT) {
            cwnd = Math.min(cwnd, probeRttCwnd());
        }
        long cap = UNSET;
        if (inProbeBw() && mode != CongestionMode.PROBE_BW_CRUISE) {
            cap = inflightHi;
        } else if (mode == CongestionMode.PROBE_RTT || mode == CongestionMode.PROBE_BW_CRUISE) {
            cap = inflightWithHeadroom();
        }
        cap = Math.min(cap, inflightLo);
        cap = Math.max(cap, minCwnd);
        cwnd = Math.min(cwnd, cap);
    }

    // ------------------------------------------------------------------ observability

    public boolean filledPipe() {
        return filledPipe;
    }

    public boolean inRecovery() {
        return inRecovery;
    }

    /** inflight_hi, or {@link Long#MAX_VALUE} when unset. */
    public long inflightHi() {
        return inflightHi;
    }

    /** inflight_lo, or {@link Long#MAX_VALUE} when unset. */
    public long inflightLo() {
        return inflightLo;
    }

    /** bw_lo, or {@link Long#MAX_VALUE} when unset. */
    public long bwLo() {
        return bwLo;
    }

    @Override
    protected void fillSnapshot(CcSnapshot s) {
        s.mode = mode;
        s.probeBwPhase = -1;
        s.pacingGain = pacingGain;
        s.cwndGain = cwndGain;
    }
}
