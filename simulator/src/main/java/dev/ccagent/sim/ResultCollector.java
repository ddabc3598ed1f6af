package dev.ccagent.sim;

import dev.ccagent.cc.CcSnapshot;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/** Turns the state of the flows and the bottleneck at the end of a run into a {@link SimulationResult}. */
final class ResultCollector {

    private ResultCollector() {
    }

    /**
     * @param scratch a snapshot the controllers' final states pass through (the run's shared one)
     * @param end     the simulated time the run stopped at
     */
    static SimulationResult collect(List<FlowSender> flows, Bottleneck bottleneck, SimulationConfig config,
            CcSnapshot scratch, long end) {
        List<SimulationResult.FlowResult> results = new ArrayList<>();
        long firstStart = Long.MAX_VALUE;
        long lastEnd = 0;
        for (FlowSender f : flows) {
            f.cc.snapshot(scratch);
            long finish = f.done() ? f.completedAt : end;
            firstStart = Math.min(firstStart, f.config.startNanos);
            lastEnd = Math.max(lastEnd, finish);
            results.add(new SimulationResult.FlowResult(f.index, f.cc.algorithm(), f.config.startNanos,
                    f.done() ? f.completedAt : -1, finish, f.delivered, f.packetsSent, f.packetsLost, f.bytesSent,
                    f.linkDrops, f.tailDrops, spuriousLosses(f), f.rtt.smoothedRtt(), f.rtt.minRtt(),
                    new CcSnapshot().copyFrom(scratch), f.startupExitTime, f.startupPacketsSent,
                    f.startupPacketsLost, f.queueDelays.toArray(), f.sampleTimes.toArray(),
                    f.sampleDelivered.toArray(), f.receiver.deliveredPayload, f.pacerWaits));
        }
        double capacityBits = bottleneck.capacityBits(firstStart, lastEnd);
        long departed = bottleneck.bytesDeparted();
        double utilisation = capacityBits > 0 ? departed * 8.0 / capacityBits : 0;
        return new SimulationResult(results, Math.min(1.0, utilisation), departed, bottleneck.maxQueuedBytes(),
                config.link.bufferBytes(), end);
    }

    /** Packets declared lost that the receiver had in fact received. */
    private static int spuriousLosses(FlowSender f) {
        BitSet both = (BitSet) f.declaredLost.clone();
        both.and(f.receiver.received);
        return both.cardinality();
    }
}
