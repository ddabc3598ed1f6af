package dev.ccagent.bench;

import dev.ccagent.cc.AckEvent;
import dev.ccagent.cc.registry.Algorithms;
import dev.ccagent.cc.CongestionController;
import dev.ccagent.cc.LossEvent;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Per-packet and per-ack cost of each congestion controller, in ns/op and (with {@code -prof gc})
 * B/op, which must be 0: the host calls these paths for every packet.
 *
 * <p>Each benchmark keeps the controller in a steady state on a simulated path (100 000 packets/s,
 * 50 ms RTT, one loss every {@value #PACKETS_PER_LOSS} packets so the window stays bounded and the
 * recovery/reduction paths are exercised), reusing one {@link AckEvent} and one {@link LossEvent}
 * as a host does:
 * <ul>
 *   <li>{@link #onPacketSent}: one packet sent per op (plus the pacer's earliest-send-time query a
 *       host makes before it).</li>
 *   <li>{@link #onAck}: one ACK frame acknowledging two packets per op (and the occasional loss).</li>
 *   <li>{@link #sendAndAck}: a host's mix: one packet sent per op, an ACK for two packets every
 *       second op, the occasional loss.</li>
 * </ul>
 * To add an algorithm (e.g. BBR), add its registry name to {@link #algorithm}'s {@code @Param}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
public class CongestionControllerBenchmark {

    static final int MSS = 1200;
    static final long RTT_NANOS = 50_000_000L;
    static final long PACKET_INTERVAL_NANOS = 10_000L;
    static final int PACKETS_PER_LOSS = 1000;

    @Param({"newreno", "cubic", "reno-hbdp", "bbr1", "bbr3"})
    public String algorithm;

    private CongestionController cc;
    private final AckEvent ack = new AckEvent();
    private final LossEvent loss = new LossEvent();
    private long now;
    private long nextPacketNumber;
    private long ops;

    @Setup
    public void setUp() {
        cc = Algorithms.create(algorithm, Map.of());
        now = 1_000_000_000L;
        // Leave slow start and settle, so measurement starts in the steady state.
        for (int i = 0; i < 200_000; i++) {
            sendAndAck();
        }
    }

    @Benchmark
    public long onPacketSent() {
        now += PACKET_INTERVAL_NANOS;
        long at = cc.earliestSendTime(now, MSS);
        cc.onPacketSent(now, nextPacketNumber++, MSS, steadyBytesInFlight(), true);
        return at;
    }

    @Benchmark
    public long onAck() {
        now += 2 * PACKET_INTERVAL_NANOS;
        ackTwoPackets();
        ops += 2;
        if (ops % PACKETS_PER_LOSS == 0) {
            loseOnePacket();
        }
        return cc.congestionWindow();
    }

    @Benchmark
    public long sendAndAck() {
        now += PACKET_INTERVAL_NANOS;
        cc.onPacketSent(now, nextPacketNumber++, MSS, steadyBytesInFlight(), true);
        ops++;
        if ((ops & 1) == 0) {
            ackTwoPackets();
        }
        if (ops % PACKETS_PER_LOSS == 0) {
            loseOnePacket();
        }
        return cc.congestionWindow();
    }

    /** The host keeps the window full: in flight is the window (not application limited). */
    private long steadyBytesInFlight() {
        return cc.congestionWindow();
    }

    private void ackTwoPackets() {
        long sent = now - RTT_NANOS;
        ack.reset(now, steadyBytesInFlight());
        ack.addPacket(nextPacketNumber++, sent, MSS);
        ack.addPacket(nextPacketNumber++, sent, MSS);
        ack.latestRttNanos = RTT_NANOS;
        ack.smoothedRttNanos = RTT_NANOS;
        ack.minRttNanos = RTT_NANOS;
        ack.rttVarianceNanos = RTT_NANOS / 4;
        cc.onAck(ack);
    }

    private void loseOnePacket() {
        loss.reset(now, steadyBytesInFlight());
        loss.addPacket(nextPacketNumber++, now - RTT_NANOS / 2, MSS);
        cc.onPacketsLost(loss);
    }
}
