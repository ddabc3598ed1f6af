package dev.ccagent.cc.bbr;

import dev.ccagent.cc.AckEvent;
import dev.ccagent.cc.CcOptions;
import dev.ccagent.cc.CcSnapshot;
import dev.ccagent.cc.CongestionMode;
import dev.ccagent.cc.LossEvent;
import dev.ccagent.cc.OptionSpec;
import dev.ccagent.cc.pacing.PacedController;
import dev.ccagent.cc.pacing.Pacer;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * What BBRv1 and BBRv3 share beyond {@link PacedController} (the pacer, bytes in flight and
 * statistics): delivery-rate sampling ({@link BandwidthSampler}), round counting
 * ({@link RoundCounter}), ack-aggregation estimation ({@link AckAggregation}), the mode and its
 * gains, the data-rate sanity check, and what the pacer is fed.
 *
 * <h2>Zero-rate immunity</h2>
 * The reason this project exists is the quic-go BBR port that hung localhost transfers at 100% CPU
 * (quic-go issue 4054): its pacer was fed bandwidth × gain, which is 0 before the first sample and
 * after a zero sample, and a rate of 0 made the pacer answer with send times in the past. Here:
 * <ul>
 *   <li>the algorithms hand the pacer a rate of 0 only to mean "no estimate yet"; the
 *       {@link Pacer} then uses the fallback rate, which this class keeps at
 *       startup gain × initial window / RTT (the initial RTT before any RTT sample, the min RTT
 *       after), and the pacer floors every rate at {@value Pacer#MIN_RATE_PACKETS_PER_SECOND}
 *       packets per second;</li>
 *   <li>zero or negative intervals and zero rates never become samples ({@link BandwidthSampler});</li>
 *   <li>{@link #earliestSendTime} is the pacer's answer: never before {@code now}, and exactly
 *       {@code now} only when there is budget for the packet.</li>
 * </ul>
 *
 * <h2>Safety mechanisms</h2>
 * Both are options; low-RTT leniency is on by default for both BBRs, the sanity check only for
 * bbr3 (bbr1 follows Linux {@code tcp_bbr.c} and quiche {@code bbr_sender.cc}, which have none):
 * <ul>
 *   <li>{@value #LOW_RTT_LENIENCY}: at min RTTs of at most 128 µs (loopback) RTT differences of
 *       up to 128 µs are noise: a sample within that margin confirms the min RTT, so it does not
 *       expire and PROBE_RTT is not entered for want of a strictly lower sample
 *       ({@link MinRttFilter}), and the delay condition of the sanity check below also needs the
 *       RTT to exceed the min by 128 µs; after picoquic's {@code PICOQUIC_MINRTT_THRESHOLD}.</li>
 *   <li>{@value #RATE_SANITY_CHECK}: in the PROBE_BW phases that do not probe (v3: DOWN and
 *       CRUISE, entering DRAIN; v1: the gain-1 phases), at least one round after the last probe,
 *       if the pacing rate exceeds three times a (non-app-limited) measured delivery rate while
 *       the RTT is above twice the min RTT, the max-bandwidth filter is reset to the delivery
 *       rate; after picoquic's {@code BBRCheckPathSaturated} in {@code picoquic/bbr.c}.</li>
 * </ul>
 *
 * <p>Every per-packet and per-ACK path is allocation free.
 */
public abstract class BbrBase extends PacedController {

    /** Seed of the algorithm's random choices (gain-cycle phase, probe wait), for reproducible runs. */
    public static final String SEED = "seed";
    /** How long a min RTT stays valid before PROBE_RTT re-measures it. */
    public static final String PROBE_RTT_INTERVAL = "probe-rtt-interval";
    /** How long PROBE_RTT holds the small window (plus one round). */
    public static final String PROBE_RTT_DURATION = "probe-rtt-duration";
    /** The smallest RTT the window is computed from when low-RTT leniency is on (kGranularity). */
    public static final long BDP_RTT_FLOOR_NANOS = 1_000_000L;

    /** Leniency of min-RTT expiry and delay signals at min RTT ≤ 128 µs. */
    public static final String LOW_RTT_LENIENCY = "low-rtt-leniency";
    /** The data-rate sanity check. */
    public static final String RATE_SANITY_CHECK = "rate-sanity-check";
    /** The sampler's overestimate avoidance under aggregated ACKs ({@link BandwidthSampler}); bbr3 only. */
    public static final String OVERESTIMATE_AVOIDANCE = "overestimate-avoidance";

    /** Minimum window in packets (quiche kDefaultMinimumCongestionWindow, the draft's BBRMinPipeCwnd). */
    public static final int MIN_PIPE_CWND_PACKETS = 4;
    /** Pacing rate above this multiple of the delivery rate is insane (picoquic). */
    public static final double SANITY_RATE_FACTOR = 3.0;
    /** ... while the RTT exceeds this multiple of the min RTT. */
    public static final double SANITY_RTT_FACTOR = 2.0;
    /** Rounds of the extra-acked max filter (quiche and the draft: 10). */
    public static final int EXTRA_ACKED_ROUNDS = 10;

    protected final long minCwnd;
    protected final double startupPacingGain;
    protected final double startupCwndGain;
    protected final boolean lenientLowRtt;
    protected final boolean rateSanityCheck;
    protected final long probeRttIntervalNanos;
    protected final long probeRttDurationNanos;
    protected final SplittableRandom random;

    protected final BandwidthSampler sampler = new BandwidthSampler();
    protected final RoundCounter rounds = new RoundCounter();
    protected final AckAggregation ackAggregation = new AckAggregation(EXTRA_ACKED_ROUNDS);

    protected long cwnd;
    /** The pacing rate the algorithm wants, bytes/s; 0 = no estimate yet (the pacer's fallback). */
    protected long pacingRateTarget;
    /** Whether the window limited sending in the current round. */
    protected boolean cwndLimitedInRound;

    protected CongestionMode mode = CongestionMode.STARTUP;
    protected double pacingGain;
    protected double cwndGain;
    protected long probeRttCount;

    private long sanityResets;
    private long startupExitTime = -1;

    protected BbrBase(CcOptions options, double startupPacingGain, double startupCwndGain) {
        super(options, rateOf(startupPacingGain, options.initialWindowBytes(), options.initialRttNanos()));
        this.minCwnd = (long) MIN_PIPE_CWND_PACKETS * mss;
        this.startupPacingGain = startupPacingGain;
        this.startupCwndGain = startupCwndGain;
        this.pacingGain = startupPacingGain;
        this.cwndGain = startupCwndGain;
        this.lenientLowRtt = options.getBoolean(LOW_RTT_LENIENCY);
        this.rateSanityCheck = options.getBoolean(RATE_SANITY_CHECK);
        this.probeRttIntervalNanos = options.getLong(PROBE_RTT_INTERVAL);
        this.probeRttDurationNanos = options.getLong(PROBE_RTT_DURATION);
        this.random = new SplittableRandom(options.getLong(SEED));
        this.cwnd = Math.max(initialWindow, minCwnd);
    }

    /** The options both BBRs declare, with the algorithm's own PROBE_RTT interval default. */
    protected static List<OptionSpec> bbrOptions(String probeRttIntervalDefault, OptionSpec... more) {
        return bbrOptions(probeRttIntervalDefault, "on", more);
    }

    /** The same, with the algorithm's own default of {@value #RATE_SANITY_CHECK}. */
    protected static List<OptionSpec> bbrOptions(String probeRttIntervalDefault, String rateSanityCheckDefault,
            OptionSpec... more) {
        List<OptionSpec> list = new ArrayList<>();
        list.add(OptionSpec.integer(SEED, 0, 1L << 53, "1",
                "seed of the random gain-cycle phase and probe waits (deterministic simulation)"));
        list.add(OptionSpec.duration(PROBE_RTT_INTERVAL, 10_000_000L, 3_600_000_000_000L,
                probeRttIntervalDefault, "how long a min RTT is trusted before PROBE_RTT re-measures it"));
        list.add(OptionSpec.duration(PROBE_RTT_DURATION, 1_000_000L, 10_000_000_000L, "200ms",
                "time PROBE_RTT holds its small window (plus one round trip)"));
        list.add(OptionSpec.bool(LOW_RTT_LENIENCY, "on",
                "at min RTT <= 128us (localhost) treat RTT changes within 128us as noise: no min-RTT expiry, no delay signals, and size the window from 1ms of RTT"));
        list.add(OptionSpec.bool(RATE_SANITY_CHECK, rateSanityCheckDefault,
                "reset the bandwidth estimate to the delivery rate when pacing > 3x delivery while RTT > 2x min RTT"));
        for (OptionSpec s : more) {
            list.add(s);
        }
        return List.copyOf(list);
    }

    // ------------------------------------------------------------------ algorithm hooks

    /** The algorithm's min RTT, or 0 before any sample. */
    public abstract long minRtt();

    /** Processes an ACK after the sampler and the round counter have seen it. */
    protected abstract void onAckProcessed(AckEvent ack, boolean roundStart, long rttSample);

    /** One lost packet (the sampler already removed it; {@code tracked} says whether it knew it). */
    protected abstract void onLostPacket(long packetNumber, int bytes, boolean tracked, long now);

    /** After all packets of a loss event. */
    protected abstract void onLossProcessed(LossEvent loss, long lostBytes);

    /** Sending resumes from idle while application limited. */
    protected void onRestartFromIdle(long now) {
    }

    /** The algorithm's bandwidth estimate for snapshots, bytes/s. */
    public abstract long bandwidthEstimate();

    protected abstract void fillSnapshot(CcSnapshot s);

    // ------------------------------------------------------------------ CongestionController

    @Override
    public void onPacketSent(long sentTimeNanos, long packetNumber, int bytes, long bytesInFlight,
                             boolean ackEliciting) {
        if (!ackEliciting) {
            return;
        }
        if (bytesInFlight - bytes <= 0 && sampler.isAppLimited()) {
            onRestartFromIdle(sentTimeNanos);
        }
        sampler.onPacketSent(sentTimeNanos, packetNumber, bytes, bytesInFlight);
        this.bytesInFlight = bytesInFlight;
        if (bytesInFlight >= congestionWindow()) {
            cwndLimitedInRound = true;
        }
        pacerOnPacketSent(sentTimeNanos, bytes);
    }

    @Override
    public void onAck(AckEvent ack) {
        if (ack.smoothedRttNanos > 0) {
            smoothedRtt = ack.smoothedRttNanos;
        }
        long acked = ack.totalBytes();
        bytesAcked += acked;
        bytesInFlight = Math.max(0, ack.priorBytesInFlight - acked);
        sampler.onAck(ack, minRtt());
        boolean roundStart;
        if (sampler.hasPacket()) {
            roundStart = rounds.onAck(sampler.samplePriorDelivered(), sampler.delivered());
        } else {
            rounds.noRound();
            roundStart = false;
        }
        onAckProcessed(ack, roundStart, Math.max(0, ack.latestRttNanos));
        if (roundStart) {
            cwndLimitedInRound = bytesInFlight >= congestionWindow();
        }
        updatePacer();
    }

    @Override
    public void onPacketsLost(LossEvent loss) {
        int n = loss.count();
        long lostBytes = loss.totalBytes();
        packetsLost += n;
        bytesInFlight = Math.max(0, loss.priorBytesInFlight - lostBytes);
        for (int i = 0; i < n; i++) {
            long pn = loss.packetNumber(i);
            int bytes = loss.bytes(i);
            boolean tracked = sampler.onPacketLost(pn, bytes);
            onLostPacket(pn, bytes, tracked, loss.timeNanos);
        }
        onLossProcessed(loss, lostBytes);
        updatePacer();
    }

    @Override
    public void onAppLimited(long timeNanos, long bytesInFlight) {
        this.bytesInFlight = bytesInFlight;
        if (bytesInFlight < congestionWindow()) {
            sampler.onAppLimited(bytesInFlight);
        }
        pacerNotBacklogged();
    }

    @Override
    public boolean canSend(long bytesInFlight) {
        boolean room = bytesInFlight < congestionWindow();
        if (!room) {
            pacerNotBacklogged();
        }
        return room;
    }

    @Override
    public long pacingRate() {
        if (pacer != null) {
            return pacer.rate();
        }
        long r = pacingRateTarget > 0 ? pacingRateTarget : fallbackRate();
        return Math.max(r, (long) mss * Pacer.MIN_RATE_PACKETS_PER_SECOND);
    }

    @Override
    public CcSnapshot snapshot(CcSnapshot s) {
        fillCommon(s);
        s.congestionWindow = congestionWindow();
        s.slowStartThreshold = Long.MAX_VALUE;
        s.bandwidthEstimate = bandwidthEstimate();
        s.minRttNanos = minRtt();
        fillSnapshot(s);
        return s;
    }

    // ------------------------------------------------------------------ shared helpers

    /**
     * The rate used while there is no bandwidth estimate: startup gain × initial window / RTT,
     * with the min RTT once one exists and the initial RTT before.
     */
    protected final long fallbackRate() {
        long rtt = minRtt();
        if (rtt <= 0) {
            rtt = initialRtt;
        }
        return rateOf(startupPacingGain, initialWindow, rtt);
    }

    /** gain × bytes per rtt, in bytes/s, saturating; never negative. */
    protected static long rateOf(double gain, long bytes, long rttNanos) {
        double r = gain * bytes * 1e9 / Math.max(1, rttNanos);
        return saturate(r);
    }

    /** gain × bandwidth, bytes/s, saturating. */
    protected static long scale(double gain, long bandwidth) {
        return saturate(gain * bandwidth);
    }

    protected static long saturate(double v) {
        if (!(v > 0)) {
            return 0;
        }
        return v >= Long.MAX_VALUE / 4 ? Long.MAX_VALUE / 4 : (long) v;
    }

    /**
     * Bandwidth × min RTT × gain, bytes; 0 when either is unknown. With low-RTT leniency on and a
     * min RTT of at most 128 µs, the min RTT counts as {@value #BDP_RTT_FLOOR_NANOS} ns (RFC 9002's timer granularity):
     * on loopback (min RTT ~100 µs) the true BDP is a handful of packets, and a window that small
     * makes the host wake its sender for every ACK: on kwik that cost 1.8× stock NewReno's CPU per
     * MB. A host cannot act on intervals below its timer granularity anyway.
     */
    protected final long bdp(long bandwidth, double gain) {
        long rtt = minRtt();
        if (bandwidth <= 0 || rtt <= 0) {
            return 0;
        }
        if (lenientLowRtt && rtt <= MinRttFilter.LOW_RTT_NANOS) {
            // Only at loopback-like min RTTs (<= 128 us), as the option text says: on a 300 us
            // LAN path flooring at 1 ms kept (1 ms - min RTT) x bw queued (issue #15).
            rtt = Math.max(rtt, BDP_RTT_FLOOR_NANOS);
        }
        return saturate(gain * bandwidth * (rtt / 1e9));
    }

    /** Pushes the algorithm's rate (or "none yet") and the current fallback into the pacer. */
    protected final void updatePacer() {
        if (pacer == null) {
            return;
        }
        pacer.setFallbackRate(fallbackRate());
        pacer.setRate(pacingRateTarget > 0 ? pacingRateTarget : 0);
    }

    /** The pacer's burst quantum, bytes (2 packets when not pacing). */
    protected final long sendQuantum() {
        return pacer != null ? pacer.quantum() : 2L * mss;
    }

    /**
     * Picoquic's data-rate sanity check: the last ACK gave a non-app-limited delivery rate, the
     * pacing rate is more than 3× that rate, and the RTT sample is above 2× the min RTT (with the
     * 128 µs noise margin at tiny RTTs when lenient). The caller resets its estimate.
     */
    protected final boolean deliveryRateInsane(long rttSample) {
        if (!rateSanityCheck || !sampler.hasRateSample() || sampler.sampleAppLimited()) {
            return false;
        }
        long min = minRtt();
        if (min <= 0 || rttSample <= 0) {
            return false;
        }
        double threshold = SANITY_RTT_FACTOR * min;
        if (lenientLowRtt && min <= MinRttFilter.LOW_RTT_NANOS) {
            threshold = Math.max(threshold, min + MinRttFilter.LOW_RTT_NANOS);
        }
        if (rttSample <= threshold) {
            return false;
        }
        long pacing = pacingRateTarget > 0 ? pacingRateTarget : pacingRate();
        if (pacing > SANITY_RATE_FACTOR * sampler.sampleRate()) {
            sanityResets++;
            return true;
        }
        return false;
    }

    /** Switches to {@code mode} with its pacing and window gains. */
    protected final void setMode(CongestionMode mode, double pacingGain, double cwndGain) {
        this.mode = mode;
        this.pacingGain = pacingGain;
        this.cwndGain = cwndGain;
    }

    /** Back to STARTUP with the startup gains. */
    protected final void enterStartup() {
        setMode(CongestionMode.STARTUP, startupPacingGain, startupCwndGain);
    }

    protected final void markStartupExit(long now) {
        if (startupExitTime < 0) {
            startupExitTime = now;
        }
    }

    // ------------------------------------------------------------------ observability

    public CongestionMode mode() {
        return mode;
    }

    public double pacingGain() {
        return pacingGain;
    }

    public double cwndGain() {
        return cwndGain;
    }

    /** Times PROBE_RTT was entered. */
    public long probeRttCount() {
        return probeRttCount;
    }

    /** Times the data-rate sanity check reset the estimate. */
    public long sanityResets() {
        return sanityResets;
    }

    /** When STARTUP was first left, or -1. */
    public long startupExitTime() {
        return startupExitTime;
    }

    /** Rounds counted so far. */
    public long roundCount() {
        return rounds.count();
    }

    /** The max extra-acked, bytes. */
    public long extraAcked() {
        return ackAggregation.extraAcked();
    }

    public BandwidthSampler sampler() {
        return sampler;
    }
}
