package dev.ccagent.agent.netty;

/** Test stand-in for Netty QUIC's {@code QuicConnectionPathStats}: the accessors {@link QuichePathStats} reads. */
public interface QuicConnectionPathStats {
    long cwnd();

    long rtt();

    long lost();

    default long deliveryRate() {
        return 0;
    }

    default long sent() {
        return 0;
    }

    default long sentBytes() {
        return 0;
    }

    default long lostBytes() {
        return 0;
    }
}
