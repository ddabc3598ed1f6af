package dev.ccagent.cc.pacing;

import dev.ccagent.cc.CcOptions;
import dev.ccagent.cc.CcSnapshot;
import dev.ccagent.cc.CongestionController;

/**
 * What every algorithm here keeps alike: the figures it was created with, the {@link Pacer} (when
 * the pacing option is on), the bytes in flight, the smoothed RTT and the counters that snapshots
 * report. Allocation free after construction.
 */
public abstract class PacedController implements CongestionController {

    protected final String algorithm;
    protected final int mss;
    protected final long initialWindow;
    protected final long initialRtt;
    /** The pacer, or null when pacing is off. */
    protected final Pacer pacer;

    protected long bytesInFlight;
    protected long smoothedRtt;
    protected long congestionEvents;
    protected long packetsLost;
    protected long bytesAcked;

    /**
     * @param fallbackRate the rate the pacer uses while the algorithm has none, bytes/s
     */
    protected PacedController(CcOptions options, long fallbackRate) {
        this.algorithm = options.algorithm();
        this.mss = options.mss();
        this.initialWindow = options.initialWindowBytes();
        this.initialRtt = options.initialRttNanos();
        this.pacer = options.pacing()
                ? new Pacer(mss, options.quantumRatio(), fallbackRate, initialWindow)
                : null;
    }

    @Override
    public String algorithm() {
        return algorithm;
    }

    @Override
    public long earliestSendTime(long nowNanos, int packetBytes) {
        return pacer != null ? pacer.earliestSendTime(nowNanos, packetBytes) : nowNanos;
    }

    /** Spends a sent packet from the pacer's budget, when pacing. */
    protected final void pacerOnPacketSent(long sentTimeNanos, int bytes) {
        if (pacer != null) {
            pacer.onPacketSent(sentTimeNanos, bytes);
        }
    }

    /** The sender is window- or application-limited: that time is not owed to the pacer. */
    protected final void pacerNotBacklogged() {
        if (pacer != null) {
            pacer.notBacklogged();
        }
    }

    /**
     * Fills the snapshot figures every algorithm reports alike: name, no PROBE_BW phase, bytes in
     * flight, pacing rate and quantum, smoothed RTT and the counters.
     */
    protected final void fillCommon(CcSnapshot s) {
        s.algorithm = algorithm;
        s.probeBwPhase = -1;
        s.bytesInFlight = bytesInFlight;
        s.pacingRate = pacingRate();
        s.pacingQuantum = pacer != null ? pacer.quantum() : 0;
        s.smoothedRttNanos = smoothedRtt;
        s.congestionEvents = congestionEvents;
        s.packetsLost = packetsLost;
        s.bytesAcked = bytesAcked;
    }
}
