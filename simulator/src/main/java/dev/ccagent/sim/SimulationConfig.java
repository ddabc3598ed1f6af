package dev.ccagent.sim;

import dev.ccagent.link.HasLinkModel;
import dev.ccagent.link.LinkModel;
import dev.ccagent.link.RateChange;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Everything a simulation run depends on. Same config (including seed) → identical results.
 * Built with {@link #builder()}. The bottleneck direction is described by a {@link LinkModel}
 * (rate and its schedule, one-way delay RTT/2, random loss, buffer); the return path takes the
 * rest of the RTT.
 */
public final class SimulationConfig implements HasLinkModel {

    /** The data direction through the bottleneck. */
    final LinkModel link;
    final long rttNanos;
    final long seed;
    final int mss;
    final List<FlowConfig> flows;
    final long ackAggregationBytes;
    final long ackAggregationNanos;
    final long durationNanos;
    final long maxAckDelayNanos;
    final long sampleIntervalNanos;
    final SimulationObserver observer;

    private SimulationConfig(Builder b) {
        this.rttNanos = b.rttNanos;
        long bdp = Math.max(b.mss, (long) (b.rateBitsPerSecond / 8.0 * b.rttNanos / 1e9));
        long buffer = b.bufferBytes > 0 ? b.bufferBytes : Math.max(b.mss, (long) (bdp * b.bufferBdp));
        LinkModel.Builder link = LinkModel.builder().rate(b.rateBitsPerSecond).delay(b.rttNanos / 2)
                .loss(b.lossProbability).buffer(buffer);
        for (RateChange change : b.rateChanges) {
            link.rateChange(change);
        }
        this.link = link.build();
        this.seed = b.seed;
        this.mss = b.mss;
        this.flows = Collections.unmodifiableList(new ArrayList<>(b.flows));
        this.ackAggregationBytes = b.ackAggregationBytes;
        this.ackAggregationNanos = b.ackAggregationNanos;
        this.durationNanos = b.durationNanos;
        this.maxAckDelayNanos = b.maxAckDelayNanos;
        this.sampleIntervalNanos = b.sampleIntervalNanos;
        this.observer = b.observer;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The bottleneck direction: rate and rate schedule, one-way delay, loss, buffer. */
    @Override
    public LinkModel link() {
        return link;
    }

    public long rttNanos() {
        return rttNanos;
    }

    public int mss() {
        return mss;
    }

    public List<FlowConfig> flows() {
        return flows;
    }

    public long durationNanos() {
        return durationNanos;
    }

    /** Bandwidth-delay product at the initial rate, bytes. */
    public long bdpBytes() {
        return (long) (link.rateBitsPerSecond() / 8.0 * rttNanos / 1e9);
    }

    public static final class Builder {
        private long rateBitsPerSecond = 20_000_000;
        private long rttNanos = 40_000_000;
        private long bufferBytes;
        private double bufferBdp = 1.0;
        private double lossProbability;
        private long seed = 1;
        private int mss = 1200;
        private final List<FlowConfig> flows = new ArrayList<>();
        private final List<RateChange> rateChanges = new ArrayList<>();
        private long ackAggregationBytes;
        private long ackAggregationNanos;
        private long durationNanos;
        private long maxAckDelayNanos = 25_000_000;
        private long sampleIntervalNanos = 10_000_000;
        private SimulationObserver observer = SimulationObserver.NONE;

        /** Bottleneck rate, bits per second. */
        public Builder rateBitsPerSecond(long bps) {
            require(bps >= 1000, "rate must be at least 1 kbit/s");
            this.rateBitsPerSecond = bps;
            return this;
        }

        /** Base round-trip time, split evenly between the two directions. */
        public Builder rttNanos(long rtt) {
            require(rtt >= 2, "RTT must be at least 2 ns");
            this.rttNanos = rtt;
            return this;
        }

        /** Drop-tail buffer in bytes (overrides {@link #bufferBdp}). */
        public Builder bufferBytes(long bytes) {
            require(bytes > 0, "buffer must be > 0 bytes");
            this.bufferBytes = bytes;
            return this;
        }

        /** Drop-tail buffer as a multiple of the bandwidth-delay product (default 1). */
        public Builder bufferBdp(double multiple) {
            require(multiple > 0, "buffer must be > 0 BDP");
            this.bufferBdp = multiple;
            this.bufferBytes = 0;
            return this;
        }

        /** Random loss probability on the data path, in [0, 1). */
        public Builder lossProbability(double p) {
            require(p >= 0 && p < 1, "loss probability must be in [0, 1)");
            this.lossProbability = p;
            return this;
        }

        public Builder seed(long seed) {
            this.seed = seed;
            return this;
        }

        public Builder mss(int mss) {
            require(mss >= 100 && mss <= 65527, "mss must be in [100, 65527]");
            this.mss = mss;
            return this;
        }

        public Builder flow(FlowConfig flow) {
            flows.add(flow);
            return this;
        }

        public Builder rateChange(long atNanos, long bitsPerSecond) {
            require(atNanos >= 0 && bitsPerSecond >= 1000, "rate change needs a time >= 0 and a rate >= 1 kbit/s");
            rateChanges.add(new RateChange(atNanos, bitsPerSecond));
            return this;
        }

        /**
         * ACK aggregation on the return path: ACKs are held until {@code bytes} of newly
         * acknowledged data have gathered or {@code nanos} passed since the first held one.
         */
        public Builder ackAggregation(long bytes, long nanos) {
            require(bytes > 0 && nanos > 0, "ack aggregation needs bytes > 0 and time > 0");
            this.ackAggregationBytes = bytes;
            this.ackAggregationNanos = nanos;
            return this;
        }

        /** Stop at this simulated time (required when a flow has no byte count). */
        public Builder durationNanos(long nanos) {
            require(nanos > 0, "duration must be > 0");
            this.durationNanos = nanos;
            return this;
        }

        /** The receiver's max_ack_delay (default 25 ms). */
        public Builder maxAckDelayNanos(long nanos) {
            require(nanos >= 0, "max ack delay must be >= 0");
            this.maxAckDelayNanos = nanos;
            return this;
        }

        /** How often the observer gets state samples (default 10 ms). */
        public Builder sampleIntervalNanos(long nanos) {
            require(nanos > 0, "sample interval must be > 0");
            this.sampleIntervalNanos = nanos;
            return this;
        }

        public Builder observer(SimulationObserver observer) {
            this.observer = observer == null ? SimulationObserver.NONE : observer;
            return this;
        }

        public SimulationConfig build() {
            require(!flows.isEmpty(), "at least one flow is needed");
            boolean unbounded = flows.stream().anyMatch(f -> f.bytes == Long.MAX_VALUE);
            require(!unbounded || durationNanos > 0, "a flow without a byte count needs a duration");
            return new SimulationConfig(this);
        }

        private static void require(boolean ok, String message) {
            if (!ok) {
                throw new IllegalArgumentException(message);
            }
        }
    }
}
