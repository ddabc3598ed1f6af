package dev.ccagent.agent.netty;

import dev.ccagent.agent.measure.ConnectionMeter;

/**
 * A Netty QUIC connection's {@link ConnectionMeter}, fed from quiche's own path stats at every
 * {@code netty.stats.period} sample (the same figures for every arm, the application's own algorithm
 * included): sent, lost (bytes and packets), acknowledged = sent − lost, and quiche's RTT estimate as
 * one RTT sample per stats sample. The close summary is written when the channel's close completes,
 * with the figures of the sample taken just before Netty freed quiche's connection.
 */
final class NettyMeter implements ConnectionMeter.Owner {

    static final String APPLICATION = "application's setting";

    private final NettyAlgorithmChoice.Selection selection;
    private final ConnectionMeter meter;

    NettyMeter(NettyAlgorithmChoice.Selection selection) {
        this.selection = selection;
        this.meter = new ConnectionMeter("netty", this);
        meter.register();
        meter.bind("netty", selection.arm.label(), selection.armAlgorithm()); // what ran, when not the arm's
    }

    void sampled(long sentBytes, long lostBytes, long sentPackets, long lostPackets, long rttNanos) {
        meter.sampled(System.nanoTime(), sentBytes, lostBytes, sentPackets, lostPackets, rttNanos);
    }

    void closed() {
        meter.close();
    }

    @Override
    public String connectionId() {
        return selection.scidHex;
    }

    @Override
    public String role() {
        return selection.side;
    }

    @Override
    public String algorithm() {
        return NettyAlgorithmChoice.runningAlgorithm(selection);
    }

    @Override
    public String controller() {
        return selection.quicheId >= 0 ? "ccagent" : APPLICATION;
    }

    @Override
    public ConnectionMeter.SlowStart controllerSlowStart() {
        return ConnectionMeter.SlowStart.UNKNOWN; // quiche's path stats carry no mode
    }
}
