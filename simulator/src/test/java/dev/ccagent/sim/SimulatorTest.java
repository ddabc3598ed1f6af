package dev.ccagent.sim;

import dev.ccagent.cc.CcSnapshot;
import dev.ccagent.cc.Units;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

// every run here is seeded (7, or 8) on the simulated clock: each bound gives the same figure every run, odds 0
class SimulatorTest {

    private static final long MS = 1_000_000L;
    private static final long S = 1_000_000_000L;

    static SimulationConfig.Builder link(long bps, long rttMs, double bufferBdp, double loss) {
        return SimulationConfig.builder().rateBitsPerSecond(bps).rttNanos(rttMs * MS).bufferBdp(bufferBdp)
                .lossProbability(loss).seed(7);
    }

    /** One NewReno flow of {@code bytes} over {@link #link}, run to its end. */
    static SimulationResult newRenoRun(long bps, long rttMs, double bufferBdp, double loss, long bytes) {
        return new Simulator(link(bps, rttMs, bufferBdp, loss).flow(FlowConfig.of("newreno").bytes(bytes)).build()).run();
    }

    @Test
    void sameSeedSameResultBitForBit() {
        SimulationConfig c = link(20_000_000, 40, 1, 0.01).flow(FlowConfig.of("newreno").bytes(4L << 20)).build();
        String a = Json.result(new Simulator(c).run());
        String b = Json.result(new Simulator(c).run());
        assertEquals(a, b);
        SimulationConfig other = link(20_000_000, 40, 1, 0.01).seed(8)
                .flow(FlowConfig.of("newreno").bytes(4L << 20)).build();
        assertTrue(!a.equals(Json.result(new Simulator(other).run())), "a different seed changes the losses");
    }

    @Test
    void conservationOfPacketsAndBytes() {
        SimulationResult r = newRenoRun(20_000_000, 40, 0.5, 0.02, 6L << 20);
        SimulationResult.FlowResult f = r.flow(0);
        assertTrue(f.completed());
        assertEquals(6L << 20, f.bytesDelivered, "every byte delivered exactly once");
        assertTrue(f.receiverPayloadBytes >= f.bytesDelivered);
        // every packet the link dropped was declared lost; every other declared loss was spurious
        assertEquals(f.linkDrops, f.packetsLost - f.spuriousLosses);
        assertTrue(f.linkDrops > 0, "2% random loss dropped something");
        assertTrue(r.maxQueuedBytes() <= r.bufferBytes(), "queue above buffer");
        assertTrue(r.linkUtilization() <= 1.0);
        // the link never carried more than its rate over the run
        double carriedBits = r.linkBytesDeparted() * 8.0;
        assertTrue(carriedBits <= 20_000_000 * (r.endNanos() / 1e9) + 1200 * 8);
    }

    @Test
    void tailDropsOnlyWhenTheBufferIsFull() {
        SimulationResult r = newRenoRun(10_000_000, 40, 0.25, 0, 4L << 20);
        SimulationResult.FlowResult f = r.flow(0);
        assertEquals(f.linkDrops, f.tailDrops, "no random loss configured");
        assertTrue(f.tailDrops > 0, "a quarter-BDP buffer overflows in slow start");
        assertTrue(r.maxQueuedBytes() <= r.bufferBytes());
        assertTrue(r.maxQueuedBytes() > r.bufferBytes() - 1200, "the buffer was filled before dropping");
    }

    @Test
    void newRenoFillsACleanOneBdpLink() {
        SimulationResult r = newRenoRun(20_000_000, 40, 1, 0, 30L << 20);
        assertTrue(r.linkUtilization() >= 0.90, "utilisation " + r.linkUtilization());
        assertTrue(r.flow(0).goodputBps() >= 0.90 * 20_000_000, "goodput " + r.flow(0).goodputBps());
    }

    @Test
    void newRenoAtOnePercentLossIsNearTheMathisCeiling() {
        SimulationResult.FlowResult f = newRenoRun(50_000_000, 50, 1, 0.01, 16L << 20).flow(0);
        double mathis = 1200 * 8 / 0.050 * Math.sqrt(3 / (2 * 0.01)); // 2.35 Mbit/s
        double ratio = f.goodputBps() / mathis;
        assertTrue(ratio > 0.6 && ratio < 1.4, "goodput " + f.goodputBps() + " vs Mathis " + mathis);
    }

    @Test
    void rateChangeIsFollowedAndUtilisationUsesTheSchedule() {
        SimulationConfig c = link(10_000_000, 40, 1, 0).rateChange(5 * S, 2_000_000).durationNanos(12 * S)
                .flow(FlowConfig.of("newreno")).build();
        SimulationResult r = new Simulator(c).run();
        SimulationResult.FlowResult f = r.flow(0);
        double late = f.deliveredBetween(8 * S, 12 * S);
        assertTrue(late <= 2_000_000 * 1.02, "after the step the flow cannot exceed 2 Mbit/s: " + late);
        assertTrue(late >= 2_000_000 * 0.8, "and still uses the link: " + late);
        assertTrue(r.linkUtilization() > 0.8 && r.linkUtilization() <= 1.0, "utilisation " + r.linkUtilization());
    }

    @Test
    void pacedSenderNeverSpinsAndObserverSeesEveryPacket() {
        List<CcSnapshot> samples = new ArrayList<>();
        long[] counts = new long[3];
        SimulationObserver obs = new SimulationObserver() {
            @Override
            public void onSample(long now, int flow, CcSnapshot s, long queue, long latest) {
                samples.add(new CcSnapshot().copyFrom(s));
            }

            @Override
            public void onPacketSent(long now, int flow, long pn, int bytes, dev.ccagent.cc.CongestionMode m) {
                counts[0]++;
            }

            @Override
            public void onPacketLost(long now, int flow, long pn, dev.ccagent.cc.CongestionMode m) {
                counts[1]++;
            }

            @Override
            public void onPacketDelivered(long now, int flow, long pn, long queueDelay) {
                counts[2]++;
            }
        };
        SimulationConfig c = link(20_000_000, 40, 1, 0.01).observer(obs)
                .flow(FlowConfig.of("newreno").bytes(4L << 20)).build();
        SimulationResult.FlowResult f = new Simulator(c).run().flow(0);
        assertEquals(f.packetsSent, counts[0]);
        assertEquals(f.packetsLost, counts[1]);
        assertEquals(f.packetsSent - f.linkDrops, counts[2], "delivered = sent - dropped");
        assertTrue(samples.size() > 50);
        assertTrue(samples.stream().allMatch(s -> s.pacingRate > 0 && s.congestionWindow > 0));
        // pacing waits are bounded by packets: a spin would make them explode
        assertTrue(f.pacerWaits <= 2 * f.packetsSent, "pacer waits " + f.pacerWaits + " for " + f.packetsSent);
    }

    @Test
    void appLimitedFlowSendsOnlyWhatTheApplicationWrites() {
        SimulationConfig c = link(20_000_000, 40, 1, 0)
                .flow(FlowConfig.of("newreno").bytes(200_000).appWrites(20_000, 500 * MS)).build();
        SimulationResult.FlowResult f = new Simulator(c).run().flow(0);
        assertTrue(f.completed());
        // ten writes, the last at 4.5 s: completion shortly after it
        assertTrue(f.completionSeconds() >= 4.5 && f.completionSeconds() < 5.0, "completion " + f.completionSeconds());
    }

    @Test
    void twoFlowsShareTheBottleneck() {
        SimulationConfig c = link(20_000_000, 40, 1, 0).durationNanos(30 * S)
                .flow(FlowConfig.of("newreno")).flow(FlowConfig.of("newreno").startNanos(5 * S)).build();
        SimulationResult r = new Simulator(c).run();
        double total = r.flow(0).deliveredBetween(15 * S, 30 * S) + r.flow(1).deliveredBetween(15 * S, 30 * S);
        assertTrue(total >= 0.9 * 20_000_000, "together they fill the link: " + total);
        assertTrue(r.jainFairness(15 * S, 30 * S) > 0.8, "fairness " + r.jainFairness(15 * S, 30 * S));
        assertTrue(r.jainFairness() != null);
    }

    @Test
    void ackAggregationDelaysAcksButDeliversEverything() {
        SimulationConfig c = link(20_000_000, 40, 1, 0).ackAggregation(Units.parseBytes("30KiB"), 10 * MS)
                .flow(FlowConfig.of("newreno").bytes(4L << 20)).build();
        SimulationResult.FlowResult f = new Simulator(c).run().flow(0);
        assertTrue(f.completed());
        assertEquals(4L << 20, f.bytesDelivered);
    }
}
