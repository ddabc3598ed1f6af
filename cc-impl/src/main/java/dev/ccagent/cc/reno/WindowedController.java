package dev.ccagent.cc.reno;

import dev.ccagent.cc.AckEvent;
import dev.ccagent.cc.CcOptions;
import dev.ccagent.cc.CcSnapshot;
import dev.ccagent.cc.CongestionMode;
import dev.ccagent.cc.LossEvent;
import dev.ccagent.cc.pacing.PacedController;

/**
 * The common frame of loss-based window algorithms (RFC 9002 §7, Appendix B): slow start,
 * recovery periods, persistent congestion, application-limited handling and pacing at
 * {@code gain × cwnd / smoothed RTT}. Subclasses decide how the window grows in congestion
 * avoidance and how far it shrinks on a congestion event.
 */
public abstract class WindowedController extends PacedController {

    /** Pacing gain in slow start (Linux and quiche use 2). */
    public static final double SLOW_START_PACING_GAIN = 2.0;
    /** Pacing gain in congestion avoidance and recovery (quiche uses 1.25). */
    public static final double AVOIDANCE_PACING_GAIN = 1.25;
    /** Minimum window in packets: kMinimumWindow = 2 × max datagram size. */
    public static final int MIN_WINDOW_PACKETS = 2;

    protected final long minWindow;

    protected long cwnd;
    protected long ssthresh = Long.MAX_VALUE;
    /** Send time at or before which packets belong to the current recovery period; MIN_VALUE: none. */
    private long recoveryStartTime = Long.MIN_VALUE;
    private boolean inRecovery;
    private boolean appLimited;
    protected long minRtt;

    protected WindowedController(CcOptions options) {
        super(options, rateFor(SLOW_START_PACING_GAIN, options.initialWindowBytes(), options.initialRttNanos()));
        this.minWindow = (long) MIN_WINDOW_PACKETS * mss;
        this.cwnd = initialWindow;
        this.smoothedRtt = 0;
    }

    // ---- growth and reduction policy, per algorithm ----

    /** Grows {@link #cwnd} in congestion avoidance for {@code ackedBytes} newly acknowledged. */
    protected abstract void onCongestionAvoidanceAck(long ackedBytes, long ackTimeNanos);

    /** Sets {@link #ssthresh} and {@link #cwnd} for a new congestion event at {@code nowNanos}. */
    protected abstract void onCongestionEvent(long nowNanos);

    /** Hook: persistent congestion collapsed the window to the minimum. */
    protected void onPersistentCongestion(long nowNanos) {
    }

    /** Hook: growth in slow start; the default adds the acked bytes (RFC 9002 §7.3.1). */
    protected void onSlowStartAck(long ackedBytes, long ackTimeNanos) {
        cwnd += ackedBytes;
    }

    // ---- CongestionController ----

    @Override
    public void onPacketSent(long sentTimeNanos, long packetNumber, int bytes, long bytesInFlight,
                             boolean ackEliciting) {
        if (!ackEliciting) {
            return;
        }
        this.bytesInFlight = bytesInFlight;
        if (bytesInFlight + mss > cwnd) {
            appLimited = false; // the window is in use again: no room for another full packet
        }
        pacerOnPacketSent(sentTimeNanos, bytes);
    }

    @Override
    public void onAck(AckEvent ack) {
        if (ack.smoothedRttNanos > 0) {
            smoothedRtt = ack.smoothedRttNanos;
        }
        if (ack.minRttNanos > 0) {
            minRtt = ack.minRttNanos;
        }
        long acked = 0;
        // RFC 9002 §7.8 ("When bytes in flight is smaller than the congestion window and sending
        // is not pacing limited, the congestion window is underutilized ... [it] SHOULD NOT be
        // increased") and RFC 9438 §5.8 (CUBIC must not grow while application limited): once
        // the application ran dry, no growth until the window is full again. Before issue #15
        // the flag cleared on every send and growth stopped only below half the window, so a
        // steadily trickling application let it double again and again.
        boolean underutilised = appLimited;
        for (int i = 0; i < ack.count(); i++) {
            int bytes = ack.bytes(i);
            acked += bytes;
            if (ack.sentTime(i) <= recoveryStartTime) {
                continue; // sent before the current recovery period began: no growth
            }
            inRecovery = false; // a packet sent during recovery was acked: the period is over
            if (underutilised) {
                continue;
            }
            if (cwnd < ssthresh) {
                onSlowStartAck(bytes, ack.timeNanos);
            } else {
                onCongestionAvoidanceAck(bytes, ack.timeNanos);
            }
        }
        bytesAcked += acked;
        bytesInFlight = Math.max(0, ack.priorBytesInFlight - acked);
        updatePacingRate();
    }

    @Override
    public void onPacketsLost(LossEvent loss) {
        int n = loss.count();
        packetsLost += n;
        bytesInFlight = Math.max(0, loss.priorBytesInFlight - loss.totalBytes());
        if (n > 0 && loss.latestSentTime() > recoveryStartTime) {
            congestionEvents++;
            recoveryStartTime = loss.timeNanos;
            inRecovery = true;
            onCongestionEvent(loss.timeNanos);
        }
        if (loss.persistentCongestion) {
            cwnd = minWindow;
            recoveryStartTime = Long.MIN_VALUE;
            inRecovery = false;
            onPersistentCongestion(loss.timeNanos);
        }
        updatePacingRate();
    }

    @Override
    public void onAppLimited(long timeNanos, long bytesInFlight) {
        this.bytesInFlight = bytesInFlight;
        appLimited = true;
        pacerNotBacklogged();
    }

    @Override
    public boolean canSend(long bytesInFlight) {
        boolean room = bytesInFlight < cwnd;
        if (!room) {
            appLimited = false; // window-limited, not application-limited
            pacerNotBacklogged();
        }
        return room;
    }

    @Override
    public long congestionWindow() {
        return cwnd;
    }

    @Override
    public long pacingRate() {
        return pacer != null ? pacer.rate() : currentRate();
    }

    public CongestionMode mode() {
        if (inRecovery) {
            return CongestionMode.RECOVERY;
        }
        return cwnd < ssthresh ? CongestionMode.SLOW_START : CongestionMode.CONGESTION_AVOIDANCE;
    }

    public boolean inRecovery() {
        return inRecovery;
    }

    @Override
    public CcSnapshot snapshot(CcSnapshot s) {
        fillCommon(s);
        s.mode = mode();
        s.congestionWindow = cwnd;
        s.slowStartThreshold = ssthresh;
        s.bandwidthEstimate = 0;
        s.minRttNanos = minRtt;
        s.pacingGain = pacingGain();
        s.cwndGain = 0;
        return s;
    }

    /** Smoothed RTT, or the initial RTT before the first sample. */
    protected long rtt() {
        return smoothedRtt > 0 ? smoothedRtt : initialRtt;
    }

    private double pacingGain() {
        return cwnd < ssthresh ? SLOW_START_PACING_GAIN : AVOIDANCE_PACING_GAIN;
    }

    private long currentRate() {
        return rateFor(pacingGain(), cwnd, rtt());
    }

    private void updatePacingRate() {
        if (pacer != null) {
            pacer.setRate(currentRate());
        }
    }

    private static long rateFor(double gain, long window, long rttNanos) {
        return (long) (gain * window * 1e9 / Math.max(1, rttNanos));
    }
}
