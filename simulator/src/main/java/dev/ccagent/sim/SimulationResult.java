package dev.ccagent.sim;

import dev.ccagent.cc.CcSnapshot;

import java.util.Arrays;
import java.util.List;

/** What a simulation measured, per flow and for the bottleneck. */
public final class SimulationResult {

    private final List<FlowResult> flows;
    private final double linkUtilization;
    private final long linkBytesDeparted;
    private final long maxQueuedBytes;
    private final long bufferBytes;
    private final long endNanos;

    SimulationResult(List<FlowResult> flows, double linkUtilization, long linkBytesDeparted,
                     long maxQueuedBytes, long bufferBytes, long endNanos) {
        this.flows = List.copyOf(flows);
        this.linkUtilization = linkUtilization;
        this.linkBytesDeparted = linkBytesDeparted;
        this.maxQueuedBytes = maxQueuedBytes;
        this.bufferBytes = bufferBytes;
        this.endNanos = endNanos;
    }

    public List<FlowResult> flows() {
        return flows;
    }

    public FlowResult flow(int i) {
        return flows.get(i);
    }

    /** Bytes the bottleneck carried ÷ what it could have carried from the first start to the last finish. */
    public double linkUtilization() {
        return linkUtilization;
    }

    public long linkBytesDeparted() {
        return linkBytesDeparted;
    }

    public long maxQueuedBytes() {
        return maxQueuedBytes;
    }

    public long bufferBytes() {
        return bufferBytes;
    }

    public long endNanos() {
        return endNanos;
    }

    /** Jain's fairness index of the flows' goodput over their whole common run; null for one flow. */
    public Double jainFairness() {
        if (flows.size() < 2) {
            return null;
        }
        long from = 0;
        long to = Long.MAX_VALUE;
        for (FlowResult f : flows) {
            from = Math.max(from, f.startNanos);
            to = Math.min(to, f.finishNanos);
        }
        return to > from ? jainFairness(from, to) : null;
    }

    /** Jain's fairness index of the flows' delivery rates between two times (from periodic samples). */
    public double jainFairness(long fromNanos, long toNanos) {
        double sum = 0;
        double sumSquares = 0;
        for (FlowResult f : flows) {
            double rate = f.deliveredBetween(fromNanos, toNanos);
            sum += rate;
            sumSquares += rate * rate;
        }
        return sumSquares == 0 ? 1.0 : sum * sum / (flows.size() * sumSquares);
    }

    /** One flow's figures. Times are nanoseconds of simulated time. */
    public static final class FlowResult {
        public final int index;
        public final String algorithm;
        public final long startNanos;
        /** When all its bytes were acknowledged; -1 if it never completed. */
        public final long completedNanos;
        /** Completion, or the end of the run. */
        public final long finishNanos;
        /** Application bytes acknowledged (each byte once). */
        public final long bytesDelivered;
        public final long packetsSent;
        public final long packetsLost;
        public final long bytesSent;
        /** Packets the bottleneck dropped (random loss and tail drop). */
        public final long linkDrops;
        public final long tailDrops;
        /** Packets declared lost although the receiver got them. */
        public final long spuriousLosses;
        public final long smoothedRttNanos;
        public final long minRttNanos;
        public final CcSnapshot finalState;
        /** When slow start / STARTUP first ended; -1 if it never did. */
        public final long startupExitNanos;
        public final long startupPacketsSent;
        public final long startupPacketsLost;
        /** Payload bytes the receiver got (first copies only). */
        public final long receiverPayloadBytes;
        /** Times the sender had window and data but the pacer said "later". */
        public final long pacerWaits;
        private final long[] queueDelays;
        private final long[] sampleTimes;
        private final long[] sampleDelivered;

        FlowResult(int index, String algorithm, long startNanos, long completedNanos, long finishNanos,
                   long bytesDelivered, long packetsSent, long packetsLost, long bytesSent, long linkDrops,
                   long tailDrops, long spuriousLosses, long smoothedRttNanos, long minRttNanos,
                   CcSnapshot finalState, long startupExitNanos, long startupPacketsSent, long startupPacketsLost,
                   long[] queueDelays, long[] sampleTimes, long[] sampleDelivered, long receiverPayloadBytes,
                   long pacerWaits) {
            this.index = index;
            this.algorithm = algorithm;
            this.startNanos = startNanos;
            this.completedNanos = completedNanos;
            this.finishNanos = finishNanos;
            this.bytesDelivered = bytesDelivered;
            this.packetsSent = packetsSent;
            this.packetsLost = packetsLost;
            this.bytesSent = bytesSent;
            this.linkDrops = linkDrops;
            this.tailDrops = tailDrops;
            this.spuriousLosses = spuriousLosses;
            this.smoothedRttNanos = smoothedRttNanos;
            this.minRttNanos = minRttNanos;
            this.finalState = finalState;
            this.startupExitNanos = startupExitNanos;
            this.startupPacketsSent = startupPacketsSent;
            this.startupPacketsLost = startupPacketsLost;
            this.queueDelays = queueDelays;
            this.sampleTimes = sampleTimes;
            this.sampleDelivered = sampleDelivered;
            this.receiverPayloadBytes = receiverPayloadBytes;
            this.pacerWaits = pacerWaits;
            Arrays.sort(this.queueDelays);
        }

        public boolean completed() {
            return completedNanos >= 0;
        }

        /** Seconds from start to completion (or to the end of the run). */
        public double completionSeconds() {
            return (finishNanos - startNanos) / 1e9;
        }

        /** Delivered application bits per second over the flow's active time. */
        public double goodputBps() {
            long active = finishNanos - startNanos;
            return active > 0 ? bytesDelivered * 8e9 / active : 0;
        }

        public double lossRate() {
            return packetsSent == 0 ? 0 : (double) packetsLost / packetsSent;
        }

        /** Loss among packets sent in slow start / STARTUP. */
        public double startupLossRate() {
            return startupPacketsSent == 0 ? 0 : (double) startupPacketsLost / startupPacketsSent;
        }

        /** Queueing-delay percentile (0–100) of this flow's packets at the bottleneck, nanoseconds. */
        public long queueDelayPercentile(double p) {
            if (queueDelays.length == 0) {
                return 0;
            }
            int i = (int) Math.ceil(p / 100.0 * queueDelays.length) - 1;
            return queueDelays[Math.max(0, Math.min(queueDelays.length - 1, i))];
        }

        /** Delivery rate (bits/s) between two times, from the periodic samples. */
        public double deliveredBetween(long fromNanos, long toNanos) {
            long a = deliveredAt(fromNanos);
            long b = deliveredAt(toNanos);
            return toNanos > fromNanos ? (b - a) * 8e9 / (toNanos - fromNanos) : 0;
        }

        /** Bytes delivered by the last sample at or before {@code t}. */
        public long deliveredAt(long t) {
            long v = 0;
            for (int i = 0; i < sampleTimes.length && sampleTimes[i] <= t; i++) {
                v = sampleDelivered[i];
            }
            if (t >= finishNanos) {
                v = bytesDelivered;
            }
            return v;
        }
    }
}
