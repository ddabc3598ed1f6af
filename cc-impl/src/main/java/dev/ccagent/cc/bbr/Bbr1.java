package dev.ccagent.cc.bbr;

import dev.ccagent.cc.AckEvent;
import dev.ccagent.cc.AlgorithmDescriptor;
import dev.ccagent.cc.CcOptions;
import dev.ccagent.cc.CcSnapshot;
import dev.ccagent.cc.CongestionMode;
import dev.ccagent.cc.LossEvent;
import dev.ccagent.cc.OptionSpec;

/**
 * BBR version 1, after google/quiche {@code quiche/quic/core/congestion_control/bbr_sender.cc}
 * (the QUIC flavour) and Linux {@code net/ipv4/tcp_bbr.c}; written for this project, not
 * translated.
 *
 * <ul>
 *   <li><b>STARTUP</b>: pacing gain 2.885 (2/ln 2), cwnd gain 2.0 as quiche (Linux uses 2.885).
 *       Left when the max bandwidth grew by less than 25% for 3 rounds, or (quiche's loss exit)
 *       after a round without growth that lost more than 2% of the bytes in flight in at least
 *       {@value #STARTUP_FULL_LOSS_COUNT} separate loss ranges.</li>
 *   <li><b>DRAIN</b>: pacing gain 1/2.885 until bytes in flight ≤ the estimated BDP.</li>
 *   <li><b>PROBE_BW</b>: the 8-phase gain cycle {1.25, 0.75, 1, 1, 1, 1, 1, 1}, one min RTT per
 *       phase (the 1.25 phase lasts until 1.25·BDP is in flight or a loss, the 0.75 phase ends
 *       early once in flight ≤ BDP); the start phase is random but never the 0.75 phase, drawn
 *       from a {@link java.util.SplittableRandom} seeded by the {@value BbrBase#SEED} option.
 *       cwnd gain 2.</li>
 *   <li><b>PROBE_RTT</b>: when the min RTT has not been renewed for
 *       {@value BbrBase#PROBE_RTT_INTERVAL} (10 s): cwnd {@value BbrBase#MIN_PIPE_CWND_PACKETS}
 *       packets until in flight falls to it, then for 200 ms and one round trip.</li>
 * </ul>
 * The bandwidth estimate is a {@link WindowedFilter windowed max} of delivery-rate samples over 10
 * rounds; app-limited samples only enter it when they raise it. cwnd = gain × BDP + the max
 * extra-acked (ack aggregation) of the last 10 rounds, approached by acked bytes, never below 4
 * packets. Losses do not shrink the model: as quiche, after STARTUP a loss starts a recovery
 * whose window is packet conservation for one round trip (each ACK releases what it acked), then
 * grows like slow start, and ends when a packet sent after the last loss is acknowledged.
 */
public final class Bbr1 extends BbrBase {

    public static final String NAME = "bbr1";

    /** Startup pacing gain, 2/ln 2 (quiche kDefaultHighGain). */
    public static final double HIGH_GAIN = 2.885;
    /** Startup cwnd gain (quiche kDerivedHighCWNDGain; Linux uses the high gain). */
    public static final double STARTUP_CWND_GAIN = 2.0;
    public static final double DRAIN_GAIN = 1.0 / HIGH_GAIN;
    /** PROBE_BW cwnd gain. */
    public static final double CWND_GAIN = 2.0;
    private static final double[] PACING_GAINS = {1.25, 0.75, 1, 1, 1, 1, 1, 1};
    public static final int GAIN_CYCLE_LENGTH = PACING_GAINS.length;
    /** Max-bandwidth filter length in rounds. */
    public static final int BANDWIDTH_WINDOW_ROUNDS = 10;
    public static final double STARTUP_GROWTH_TARGET = 1.25;
    public static final int STARTUP_ROUNDS_WITHOUT_GROWTH = 3;
    /** quiche {@code quic_bbr2_default_startup_full_loss_count}. */
    public static final int STARTUP_FULL_LOSS_COUNT = 8;
    /** quiche {@code quic_bbr2_default_loss_threshold}. */
    public static final double STARTUP_LOSS_THRESHOLD = 0.02;

    /** DRAIN ends after this many rounds at the latest (draft-ietf-ccwg-bbr CheckDrainDone). */
    public static final int DRAIN_MAX_ROUNDS = 3;

    public static final String STARTUP_LOSS_EXIT = "startup-loss-exit";
    public static final String DRAIN_TO_TARGET = "drain-to-target";

    public static final AlgorithmDescriptor DESCRIPTOR = new AlgorithmDescriptor(NAME,
            "BBRv1 (quiche bbr_sender.cc / Linux tcp_bbr.c): model-based, 8-phase gain cycle",
            // The data-rate sanity check is off by default for BBRv1: Linux net/ipv4/tcp_bbr.c
            // (v1: bbr_update_bw feeds the max filter, bbr_lt_bw_sampling only detects policers)
            // and quiche's bbr_sender.cc have no such check. Beside CUBIC in a deep buffer our
            // flow is window-limited at 2 x bw x min RTT while the RTT is several times the min,
            // so "pacing > 3x delivery with RTT > 2x min" held at DRAIN exit and in every
            // window-limited round and reset the max filter to the starved rate: bbr1 vs CUBIC,
            // 50 Mbit/s, 40 ms, 8 BDP got 5.1 Mbit/s over 60 s with it, 10.1 without (issue #26).
            bbrOptions("10s", "off",
                    OptionSpec.bool(STARTUP_LOSS_EXIT, "on",
                            "leave STARTUP after a round without growth that lost >2% (quiche)"),
                    OptionSpec.bool(DRAIN_TO_TARGET, "off",
                            "keep PROBE_BW's 0.75 gain until bytes in flight <= BDP, not just one RTT "
                                    + "(quiche/Chromium drain_to_target_): drains a standing queue every cycle")),
            Bbr1::new);

    private enum Recovery { NONE, CONSERVATION, GROWTH }

    private final WindowedFilter maxBandwidth = WindowedFilter.max(BANDWIDTH_WINDOW_ROUNDS);
    private final MinRttFilter minRttFilter;
    private final boolean startupLossExit;
    private final boolean drainToTarget;

    private int cycleIndex;
    private long drainStartRound;
    /** Round starts since the last 1.25 phase began (picoquic rounds_since_bw_probe). */
    private long roundsSinceProbe;
    private long cycleStart;

    private boolean fullBandwidthReached;
    private long bandwidthAtLastRound;
    private int roundsWithoutGrowth;
    private boolean lastSampleAppLimited;

    private int lossRangesInRound;
    private long bytesLostInRound;
    private long lastLostPacket = Long.MIN_VALUE;
    private boolean lossSinceLastAck;

    private static final long NONE = Long.MIN_VALUE;
    private long exitProbeRttAt = NONE;
    private boolean probeRttRoundPassed;
    private boolean exitingQuiescence;

    private Recovery recovery = Recovery.NONE;
    private long recoveryWindow;
    private long endRecoveryAt = -1;

    public Bbr1(CcOptions options) {
        super(options, HIGH_GAIN, STARTUP_CWND_GAIN);
        this.minRttFilter = new MinRttFilter(probeRttIntervalNanos, lenientLowRtt);
        this.startupLossExit = options.getBoolean(STARTUP_LOSS_EXIT);
        this.drainToTarget = options.getBoolean(DRAIN_TO_TARGET);
    }

    // ------------------------------------------------------------------ model

    @Override
    public long minRtt() {
        return minRttFilter == null ? 0 : minRttFilter.value();
    }

    @Override
    public long bandwidthEstimate() {
        return maxBandwidth.best();
    }

    /** gain × BDP, or gain × initial window before a bandwidth sample; at least 4 packets. */
    private long targetWindow(double gain) {
        long w = bdp(maxBandwidth.best(), gain);
        if (w == 0) {
            w = (long) (gain * initialWindow);
        }
        return Math.max(w, minCwnd);
    }

    @Override
    public long congestionWindow() {
        if (mode == CongestionMode.PROBE_RTT) {
            return minCwnd;
        }
        if (recovery != Recovery.NONE) {
            return Math.min(cwnd, recoveryWindow);
        }
        return cwnd;
    }

    // ------------------------------------------------------------------ events

    @Override
    protected void onAckProcessed(AckEvent ack, boolean roundStart, long rtt) {
        long now = ack.timeNanos;
        long acked = ack.totalBytes();
        boolean hasLosses = lossSinceLastAck;
        long round = rounds.count();

        if (sampler.hasPacket()) {
            updateRecoveryState(sampler.largestAckedPacket(), hasLosses, roundStart);
            lastSampleAppLimited = sampler.sampleAppLimited();
        }
        if (sampler.hasRateSample()) {
            long rate = sampler.sampleRate();
            if (!sampler.sampleAppLimited() || rate > maxBandwidth.best()) {
                maxBandwidth.update(rate, round);
            }
        }
        boolean minRttExpired = minRttFilter.update(rtt, now);
        if (roundStart) {
            roundsSinceProbe++;
        }
        checkPathSaturated(now, rtt, round);
        ackAggregation.onAck(maxBandwidth.best(), now, acked, round, cwnd);

        if (mode == CongestionMode.PROBE_BW) {
            updateGainCycle(now, ack.priorBytesInFlight, hasLosses);
        }
        if (roundStart && !fullBandwidthReached) {
            checkFullBandwidth();
        }
        maybeExitStartupOrDrain(now);
        maybeEnterOrExitProbeRtt(now, roundStart, minRttExpired);

        updatePacingRate();
        updateCongestionWindow(acked);
        updateRecoveryWindow(acked);

        if (roundStart) {
            lossRangesInRound = 0;
            bytesLostInRound = 0;
        }
        lossSinceLastAck = false;
    }

    @Override
    protected void onLostPacket(long packetNumber, int bytes, boolean tracked, long now) {
        if (packetNumber != lastLostPacket + 1) {
            lossRangesInRound++;
        }
        lastLostPacket = packetNumber;
    }

    @Override
    protected void onLossProcessed(LossEvent loss, long lostBytes) {
        if (loss.count() == 0 && !loss.persistentCongestion) {
            return;
        }
        bytesLostInRound += lostBytes;
        lossSinceLastAck = true;
        if (loss.persistentCongestion) {
            // RFC 9002 §7.6: the path may have changed; keep the model but hold the window small
            // for a round trip, like Linux on RTO (packet conservation from almost nothing).
            enterRecovery();
            recoveryWindow = minCwnd;
            return;
        }
        if (!fullBandwidthReached) {
            return; // quiche: no recovery window in STARTUP
        }
        endRecoveryAt = sampler.lastSentPacket();
        if (recovery == Recovery.NONE) {
            enterRecovery();
        } else {
            recoveryWindow = recoveryWindow >= lostBytes ? recoveryWindow - lostBytes : mss;
            recoveryWindow = Math.max(Math.max(recoveryWindow, bytesInFlight), minCwnd);
        }
    }

    private void enterRecovery() {
        if (recovery == Recovery.NONE) {
            congestionEvents++;
        }
        recovery = Recovery.CONSERVATION;
        recoveryWindow = Math.max(minCwnd, bytesInFlight);
        endRecoveryAt = sampler.lastSentPacket();
        // Conservation lasts a whole round from now.
        rounds.startRoundNow(sampler.delivered());
    }

    @Override
    protected void onRestartFromIdle(long now) {
        exitingQuiescence = true;
    }

    // ------------------------------------------------------------------ state machine

    private void updateRecoveryState(long largestAcked, boolean hasLosses, boolean roundStart) {
        switch (recovery) {
            case CONSERVATION:
                if (roundStart) {
                    recovery = Recovery.GROWTH;
                }
                // fall through
            case GROWTH:
                if (!hasLosses && largestAcked > endRecoveryAt) {
                    recovery = Recovery.NONE;
                }
                break;
            default:
                break;
        }
    }

    private void updateGainCycle(long now, long priorInFlight, boolean hasLosses) {
        boolean advance = now - cycleStart > minRtt();
        if (pacingGain > 1.0 && !hasLosses && priorInFlight < targetWindow(pacingGain)) {
            advance = false; // keep probing until 1.25·BDP is actually in flight
        }
        if (pacingGain < 1.0 && bytesInFlight <= targetWindow(1.0)) {
            advance = true; // the queue is drained already
        }
        if (advance) {
            cycleIndex = (cycleIndex + 1) % GAIN_CYCLE_LENGTH;
            cycleStart = now;
            if (PACING_GAINS[cycleIndex] > 1.0) {
                roundsSinceProbe = 0;
            }
            if (drainToTarget && pacingGain < 1.0 && PACING_GAINS[cycleIndex] == 1.0
                    && bytesInFlight > targetWindow(1.0)) {
                return; // the queue is not drained yet: stay at the low gain into the cruise phases
            }
            pacingGain = PACING_GAINS[cycleIndex];
        }
    }

    /**
     * The data-rate sanity check, where picoquic applies it ({@code BBRCheckPathSaturated},
     * {@code picoquic/bbr.c}, from the DOWN and CRUISE cases of {@code BBRUpdateProbeBWCyclePhase}):
     * translated to v1's gain cycle, only in the phases that do not probe (gain 1.0) and at least
     * one round after the 1.25 probe. Unlike picoquic (v3) it only resets the max filter and does
     * not enter DRAIN: v1's cycle drains with its 0.75 phase anyway, and entering DRAIN measured
     * worse (two bbr1 flows, 20 Mbit/s, 40 ms, 1 BDP, second at 2 s: Jain 0.83 with, 0.90
     * without, over 40 s).
     */
    private void checkPathSaturated(long now, long rtt, long round) {
        if (mode != CongestionMode.PROBE_BW || pacingGain != 1.0 || roundsSinceProbe < 1
                || !deliveryRateInsane(rtt)) {
            return;
        }
        maxBandwidth.reset(sampler.sampleRate(), round);
    }

    private void enterDrain() {
        setMode(CongestionMode.DRAIN, DRAIN_GAIN, STARTUP_CWND_GAIN);
        drainStartRound = rounds.count();
    }

    private void checkFullBandwidth() {
        if (lastSampleAppLimited) {
            return;
        }
        long bw = maxBandwidth.best();
        if (bw >= bandwidthAtLastRound * STARTUP_GROWTH_TARGET) {
            bandwidthAtLastRound = bw;
            roundsWithoutGrowth = 0;
            return;
        }
        roundsWithoutGrowth++;
        if (roundsWithoutGrowth >= STARTUP_ROUNDS_WITHOUT_GROWTH || shouldExitStartupDueToLoss()) {
            fullBandwidthReached = true;
        }
    }

    private boolean shouldExitStartupDueToLoss() {
        if (!startupLossExit || lossRangesInRound < STARTUP_FULL_LOSS_COUNT) {
            return false;
        }
        long inflightAtSend = sampler.sampleTxInFlight();
        return inflightAtSend > 0 && bytesLostInRound > inflightAtSend * STARTUP_LOSS_THRESHOLD;
    }

    private void maybeExitStartupOrDrain(long now) {
        if (mode == CongestionMode.STARTUP && fullBandwidthReached) {
            markStartupExit(now);
            enterDrain();
        }
        // Leave DRAIN once in flight is down to the BDP, or after DRAIN_MAX_ROUNDS rounds at the
        // latest: draft-ietf-ccwg-bbr CheckDrainDone() (round_count > drain_start_round + 3),
        // adopted here for v1 too. Behind a queue held by other flows (CUBIC in a deep buffer)
        // in flight cannot fall to the BDP; an unbounded DRAIN paced at 1/2.885 for seconds while
        // the max filter forgot the real rate (issue #15: bbr1 got 1.8 of 50 Mbit/s).
        if (mode == CongestionMode.DRAIN && (bytesInFlight <= targetWindow(1.0)
                || rounds.count() > drainStartRound + DRAIN_MAX_ROUNDS)) {
            enterProbeBandwidth(now);
        }
    }

    private void enterProbeBandwidth(long now) {
        mode = CongestionMode.PROBE_BW;
        cwndGain = CWND_GAIN;
        // A random phase out of {0, 2..7}: never start in the draining 0.75 phase, which must
        // follow a probe.
        int phase = random.nextInt(GAIN_CYCLE_LENGTH - 1);
        if (phase >= 1) {
            phase++;
        }
        cycleIndex = phase;
        cycleStart = now;
        if (PACING_GAINS[cycleIndex] > 1.0) {
            roundsSinceProbe = 0;
        }
        pacingGain = PACING_GAINS[cycleIndex];
    }

    private void maybeEnterOrExitProbeRtt(long now, boolean roundStart, boolean minRttExpired) {
        if (minRttExpired && !exitingQuiescence && mode != CongestionMode.PROBE_RTT) {
            if (mode == CongestionMode.STARTUP) {
                markStartupExit(now);
            }
            mode = CongestionMode.PROBE_RTT;
            pacingGain = 1.0;
            exitProbeRttAt = NONE;
            probeRttCount++;
        }
        if (mode == CongestionMode.PROBE_RTT) {
            sampler.onAppLimited(bytesInFlight); // low samples taken now must not shrink the model
            if (exitProbeRttAt == NONE) {
                // One packet of slack: hosts check the window before sending.
                if (bytesInFlight < minCwnd + mss) {
                    exitProbeRttAt = now + probeRttDurationNanos;
                    probeRttRoundPassed = false;
                    rounds.startRoundNow(sampler.delivered());
                }
            } else {
                if (roundStart) {
                    probeRttRoundPassed = true;
                }
                if (now >= exitProbeRttAt && probeRttRoundPassed) {
                    minRttFilter.refresh(now);
                    if (!fullBandwidthReached) {
                        enterStartup();
                    } else {
                        enterProbeBandwidth(now);
                    }
                }
            }
        }
        exitingQuiescence = false;
    }

    private void updatePacingRate() {
        long bw = maxBandwidth.best();
        if (bw <= 0) {
            pacingRateTarget = 0; // no estimate: the pacer's fallback (startup gain × IW / RTT)
            return;
        }
        long rate = scale(pacingGain, bw);
        if (fullBandwidthReached) {
            pacingRateTarget = rate;
            return;
        }
        // STARTUP never lowers the rate, and never goes below the initial-window rate.
        pacingRateTarget = Math.max(rate, Math.max(pacingRateTarget, fallbackRate()));
    }

    private void updateCongestionWindow(long acked) {
        if (mode == CongestionMode.PROBE_RTT) {
            return;
        }
        long target = targetWindow(cwndGain);
        if (fullBandwidthReached) {
            target += ackAggregation.extraAcked();
            cwnd = Math.min(target, cwnd + acked);
        } else if (cwnd < target || sampler.delivered() < initialWindow) {
            cwnd += acked; // STARTUP never shrinks the window
        }
        cwnd = Math.max(cwnd, minCwnd);
    }

    private void updateRecoveryWindow(long acked) {
        if (recovery == Recovery.NONE) {
            return;
        }
        if (recovery == Recovery.GROWTH) {
            recoveryWindow += acked;
        }
        // Packet conservation: always release at least what this ACK acknowledged.
        recoveryWindow = Math.max(recoveryWindow, bytesInFlight + acked);
        recoveryWindow = Math.max(recoveryWindow, minCwnd);
    }

    // ------------------------------------------------------------------ observability

    public int cycleIndex() {
        return cycleIndex;
    }

    public boolean inRecovery() {
        return recovery != Recovery.NONE;
    }

    public boolean fullBandwidthReached() {
        return fullBandwidthReached;
    }

    @Override
    protected void fillSnapshot(CcSnapshot s) {
        s.mode = mode;
        s.probeBwPhase = mode == CongestionMode.PROBE_BW ? cycleIndex : -1;
        s.pacingGain = pacingGain;
        s.cwndGain = mode == CongestionMode.PROBE_RTT ? 0.0 : cwndGain;
    }
}
