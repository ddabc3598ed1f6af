package dev.ccagent.cc;

/**
 * A mutable, reusable copy of a controller's state for JFR events, traces and tests.
 * Filled by {@link CongestionController#snapshot(CcSnapshot)}; fields that do not apply to an
 * algorithm are 0 (or 0.0).
 */
public final class CcSnapshot {
    public String algorithm = "";
    public CongestionMode mode = CongestionMode.SLOW_START;
    /** BBRv1 PROBE_BW gain-cycle phase (0–7); -1 otherwise. */
    public int probeBwPhase = -1;
    public long congestionWindow;
    /** Slow-start threshold; {@link Long#MAX_VALUE} before the first loss. */
    public long slowStartThreshold;
    public long bytesInFlight;
    /** Bandwidth estimate in bytes per second (BBR's max filter; 0 for loss-based algorithms). */
    public long bandwidthEstimate;
    public long pacingRate;
    public long pacingQuantum;
    public long minRttNanos;
    public long smoothedRttNanos;
    public double pacingGain;
    public double cwndGain;
    /** Congestion events (window reductions) so far. */
    public long congestionEvents;
    /** Packets declared lost so far. */
    public long packetsLost;
    /** Bytes acknowledged so far. */
    public long bytesAcked;

    public CcSnapshot copyFrom(CcSnapshot o) {
        algorithm = o.algorithm;
        mode = o.mode;
        probeBwPhase = o.probeBwPhase;
        congestionWindow = o.congestionWindow;
        slowStartThreshold = o.slowStartThreshold;
        bytesInFlight = o.bytesInFlight;
        bandwidthEstimate = o.bandwidthEstimate;
        pacingRate = o.pacingRate;
        pacingQuantum = o.pacingQuantum;
        minRttNanos = o.minRttNanos;
        smoothedRttNanos = o.smoothedRttNanos;
        pacingGain = o.pacingGain;
        cwndGain = o.cwndGain;
        congestionEvents = o.congestionEvents;
        packetsLost = o.packetsLost;
        bytesAcked = o.bytesAcked;
        return this;
    }

    @Override
    public String toString() {
        return algorithm + " " + mode.label() + (probeBwPhase >= 0 ? "[" + probeBwPhase + "]" : "")
                + " cwnd=" + congestionWindow + " ssthresh="
                + (slowStartThreshold == Long.MAX_VALUE ? "inf" : Long.toString(slowStartThreshold))
                + " inflight=" + bytesInFlight + " bw=" + bandwidthEstimate + "B/s pacing=" + pacingRate
                + "B/s minRtt=" + minRttNanos / 1000 + "us srtt=" + smoothedRttNanos / 1000 + "us lost="
                + packetsLost;
    }
}
