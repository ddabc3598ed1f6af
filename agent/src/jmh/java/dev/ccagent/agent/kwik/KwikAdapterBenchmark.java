package dev.ccagent.agent.kwik;

import dev.ccagent.agent.AgentBenchmark;
import dev.ccagent.agent.config.AgentArgs;
import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.select.ControllerFactory;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import tech.kwik.core.cc.CongestionControlEventListener;
import tech.kwik.core.common.EncryptionLevel;
import tech.kwik.core.common.PnSpace;
import tech.kwik.core.crypto.Aead;
import tech.kwik.core.impl.PacketProcessor;
import tech.kwik.core.log.Logger;
import tech.kwik.core.packet.PacketInfo;
import tech.kwik.core.packet.PacketMetaData;
import tech.kwik.core.packet.QuicPacket;

import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The per-packet and per-ACK cost of the kwik adapter (what kwik calls on its sender and receiver
 * threads once the agent swapped its controller): {@code remainingCwnd} + {@code registerInFlight}
 * per packet (after the send-stamp advice hook), the ACK-time advice hook + {@code registerAcked} per ACK. Real kwik types; the packets
 * and ACK lists are preallocated so that {@code -prof gc} shows what the adapter itself allocates.
 * All packets carry one fixed send time (kwik's Instants are immutable): the RTT samples are 1 ns,
 * the localhost case.
 */
@State(Scope.Thread)
public class KwikAdapterBenchmark extends AgentBenchmark {

    /** A 1-RTT packet of a fixed size whose number the benchmark sets. */
    static final class BenchPacket extends QuicPacket {
        BenchPacket(int size) {
            packetSize = size;
        }

        @Override
        public int estimateLength(int additionalPayload) {
            return packetSize;
        }

        @Override
        public EncryptionLevel getEncryptionLevel() {
            return EncryptionLevel.App;
        }

        @Override
        public PnSpace getPnSpace() {
            return PnSpace.App;
        }

        @Override
        public byte[] generatePacketBytes(Aead aead) {
            throw new IllegalStateException("the benchmark never serialises a packet");
        }

        @Override
        public void parse(ByteBuffer buffer, Aead aead, long largestPacketNumber, Logger log, int sourceConnectionIdLength) {
            throw new IllegalStateException("the benchmark never parses a packet");
        }

        @Override
        public PacketProcessor.ProcessResult accept(PacketProcessor processor, PacketMetaData metaData) {
            throw new IllegalStateException("the benchmark never processes a packet");
        }
    }

    static final int RING = 1 << 14;
    static final int SIZE = 1252;

    /**
     * {@code kwik} is kwik's own NewReno called directly, without the agent: the baseline for
     * {@code stock}, the agent's pass-through adapter around that same controller.
     */
    @Param({"kwik", "stock", "newreno", "cubic", "bbr1", "bbr3", "bbr1+pacing"})
    public String algorithm;

    /** What kwik calls: the adapter, or (for {@code kwik}) kwik's controller itself. */
    private tech.kwik.core.cc.CongestionController adapter;
    private final BenchPacket[] packets = new BenchPacket[RING];
    private final List<List<PacketInfo>> acks = new ArrayList<>();
    private Instant now;
    private long next;
    private long acked;

    @Setup(Level.Trial)
    public void setUp() {
        boolean kwikAlone = algorithm.equals("kwik");
        // pacing off by default: the loop sends as fast as the benchmark runs, which no pacer would
        // allow; "+pacing" keeps the pacer on, so remainingCwnd often answers 0 and arms the wake-up timer
        AgentConfig config = kwikAlone ? AgentArgs.parse("cc=stock").config()
                : algorithm.endsWith("+pacing") ? AgentArgs.parse("cc=" + algorithm.substring(0, algorithm.indexOf('+'))).config()
                : AgentArgs.parse("cc=" + algorithm + ";opt.newreno.pacing=off;opt.cubic.pacing=off;"
                        + "opt.bbr1.pacing=off;opt.bbr3.pacing=off").config();
        if (algorithm.equals("stock")) {
            config = AgentArgs.parse("cc=stock").config();
        }
        config = config == null ? AgentArgs.parse("cc=stock").config() : config;
        CongestionControlEventListener listener = new CongestionControlEventListener() {
            @Override
            public void bytesInFlightIncreased(long bytesInFlight) {
            }

            @Override
            public void bytesInFlightDecreased(long bytesInFlight) {
            }
        };
        AgentConfig.Arm arm = config.defaultArm();
        tech.kwik.core.cc.CongestionController kwikNewReno =
                new tech.kwik.core.cc.NewRenoCongestionController(new tech.kwik.core.log.NullLogger(), listener);
        if (kwikAlone) {
            adapter = kwikNewReno;
        } else {
            KwikControllerAdapter a = new KwikControllerAdapter(new Object(), listener, SIZE,
                    new KwikConnectionSelector(config, "bench"), ControllerFactory.create(arm, SIZE), arm, 100_000_000L);
            a.setStock(kwikNewReno);
            if (arm.isStock()) {
                a.observeStock(arm);
            }
            adapter = a;
        }
        now = Instant.now();
        for (int i = 0; i < RING; i++) {
            packets[i] = new BenchPacket(SIZE);
        }
        // ACK lists of two packets each, over the whole ring, reused round after round
        for (int i = 0; i < RING; i += 2) {
            List<PacketInfo> ack = new ArrayList<>(2);
            ack.add(new PacketInfo(now, packets[i], p -> { }));
            ack.add(new PacketInfo(now, packets[i + 1], p -> { }));
            acks.add(ack);
        }
    }

    /** Per packet: the window/pacer question kwik asks, then the packet registered in flight. */
    @Benchmark
    public long sendPacket() {
        BenchPacket p = packets[(int) (next & (RING - 1))];
        p.setPacketNumber(next++);
        long room = adapter.remainingCwnd();
        KwikHooks.onPacketSent(adapter, p, now); // what the advice on LossDetector.packetSent does (a no-op for kwik alone)
        adapter.registerInFlight(p);
        if (next - acked >= 256) {
            ackTwo(); // keep the window open: a steady state, not a full window
        }
        return room;
    }

    /** Per ACK of two packets: the advice's ACK-time hook, then registerAcked. */
    @Benchmark
    public long sendTwoAckTwo() {
        for (int i = 0; i < 2; i++) {
            BenchPacket p = packets[(int) (next & (RING - 1))];
            p.setPacketNumber(next++);
            KwikHooks.onPacketSent(adapter, p, now);
            adapter.registerInFlight(p);
        }
        return ackTwo();
    }

    private long ackTwo() {
        int slot = (int) ((acked & (RING - 1)) >> 1);
        long largest = acked + 1;
        KwikHooks.onAckReceived(adapter, now, largest, 0); // what the advice does (a no-op for kwik alone)
        adapter.registerAcked(acks.get(slot));
        acked += 2;
        return adapter.getBytesInFlight();
    }
}
