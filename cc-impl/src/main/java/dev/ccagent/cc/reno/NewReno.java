package dev.ccagent.cc.reno;

import dev.ccagent.cc.AlgorithmDescriptor;
import dev.ccagent.cc.CcOptions;
import dev.ccagent.cc.OptionSpec;

import java.util.List;

/**
 * NewReno as RFC 9002 §7 and Appendix B specify it for QUIC: slow start adds the acked bytes,
 * congestion avoidance adds one max datagram size per window acknowledged, a congestion event
 * multiplies the window by the loss reduction factor (0.5) once per recovery period, persistent
 * congestion collapses it to the minimum window.
 */
public final class NewReno extends WindowedController {

    public static final String NAME = "newreno";
    /** kLossReductionFactor. */
    public static final double DEFAULT_BETA = 0.5;

    public static final AlgorithmDescriptor DESCRIPTOR = new AlgorithmDescriptor(NAME,
            "NewReno, RFC 9002 §7",
            List.of(OptionSpec.decimal("beta", 0, true, 0.99, "0.5", "loss reduction factor")),
            NewReno::new);

    private final double beta;
    /** Bytes acked in congestion avoidance not yet turned into window growth. */
    private long avoidanceCredit;

    public NewReno(CcOptions options) {
        super(options);
        this.beta = options.getDouble("beta");
    }

    @Override
    protected void onCongestionAvoidanceAck(long ackedBytes, long ackTimeNanos) {
        // congestion_window += max_datagram_size * acked_bytes / congestion_window, without the
        // rounding loss of doing it per packet.
        avoidanceCredit += ackedBytes;
        while (avoidanceCredit >= cwnd) {
            avoidanceCredit -= cwnd;
            cwnd += mss;
        }
    }

    @Override
    protected void onCongestionEvent(long nowNanos) {
        ssthresh = (long) (cwnd * beta);
        cwnd = Math.max(ssthresh, minWindow);
        avoidanceCredit = 0;
    }

    @Override
    protected void onPersistentCongestion(long nowNanos) {
        avoidanceCredit = 0;
    }
}
