package dev.ccagent.it.emulator;

import dev.ccagent.link.HasLinkModel;
import dev.ccagent.link.LinkModel;

import java.util.ArrayList;
import java.util.List;

/**
 * What one direction of the emulated link does to datagrams. Immutable; built with
 * {@link #builder()}. Times are nanoseconds, rates bits per second, sizes bytes. What the simulator
 * models too (rate and its schedule, delay, random and Gilbert–Elliott loss, buffer) is the shared
 * {@link LinkModel}; jitter, reordering, duplication, blackouts and bursty service are the emulator's.
 */
public final class LinkProfile implements HasLinkModel {

    /** A time window in which every datagram is dropped. */
    public static final class Blackout {
        public final long fromNanos;
        public final long toNanos;

        public Blackout(long fromNanos, long toNanos) {
            this.fromNanos = fromNanos;
            this.toNanos = toNanos;
        }
    }

    /** What the path does that the simulator models too: rate and its schedule, delay, loss, buffer. */
    final LinkModel link;
    final long jitterNanos;
    final double reorderProbability;
    final long reorderExtraDelayNanos;
    final double duplicateProbability;
    final List<Blackout> blackouts;
    final long serviceIntervalNanos;

    private LinkProfile(Builder b) {
        link = b.link.build();
        jitterNanos = b.jitter;
        reorderProbability = b.reorder;
        reorderExtraDelayNanos = b.reorderDelay;
        duplicateProbability = b.duplicate;
        blackouts = List.copyOf(b.blackouts);
        serviceIntervalNanos = b.serviceInterval;
    }

    /** A direction that passes everything at once (no rate limit, no delay). */
    public static LinkProfile transparent() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The shared link description ({@code link-model}) this direction plays out, with the emulator-only effects beside it. */
    @Override
    public LinkModel link() {
        return link;
    }

    boolean inBlackout(long sinceStart) {
        for (Blackout b : blackouts) {
            if (sinceStart >= b.fromNanos && sinceStart < b.toNanos) {
                return true;
            }
        }
        return false;
    }

    public static final class Builder {
        private final LinkModel.Builder link = LinkModel.builder();
        private long rate;
        private long jitter;
        private double reorder;
        private long reorderDelay;
        private double duplicate;
        private final List<Blackout> blackouts = new ArrayList<>();
        private long serviceInterval;

        /** Serialisation rate (token bucket of one packet); 0 = unlimited. */
        public Builder rate(long bitsPerSecond) {
            link.rate(bitsPerSecond);
            rate = bitsPerSecond;
            return this;
        }

        /** One-way propagation delay. */
        public Builder delay(long nanos) {
            link.delay(nanos);
            return this;
        }

        /** Uniform extra delay in [0, jitter); packets keep their order unless reordering is asked for. */
        public Builder jitter(long nanos) {
            check(nanos >= 0, "jitter must be >= 0");
            jitter = nanos;
            return this;
        }

        /** Independent random loss. */
        public Builder loss(double p) {
            link.loss(p);
            return this;
        }

        /**
         * Gilbert–Elliott burst loss: from the good state the chain enters the bad state with
         * {@code goodToBad} per packet and leaves it with {@code badToGood}; in the bad state a
         * packet is lost with {@code lossInBad}.
         */
        public Builder burstLoss(double goodToBad, double badToGood, double lossInBad) {
            link.burstLoss(goodToBad, badToGood, lossInBad);
            return this;
        }

        /** Drop-tail buffer in front of the serialiser, bytes. */
        public Builder buffer(long bytes) {
            link.buffer(bytes);
            return this;
        }

        /** Drop-tail buffer as a multiple of this direction's rate × the given round-trip time. */
        public Builder bufferBdp(double multiple, long rttNanos) {
            check(rate > 0, "set the rate before a BDP-sized buffer");
            check(multiple > 0, "BDP multiple must be > 0");
            link.buffer(Math.max(1500, (long) (rate / 8.0 * rttNanos / 1e9 * multiple)));
            return this;
        }

        /** With probability p a packet is held back an extra {@code extraDelay} and overtaken. */
        public Builder reorder(double p, long extraDelayNanos) {
            check(p >= 0 && p <= 1 && extraDelayNanos >= 0, "reorder needs p in [0, 1] and a delay >= 0");
            reorder = p;
            reorderDelay = extraDelayNanos;
            return this;
        }

        public Builder duplicate(double p) {
            check(p >= 0 && p <= 1, "duplicate probability must be in [0, 1]");
            duplicate = p;
            return this;
        }

        /** Drop everything between two times since start. */
        public Builder blackout(long fromNanos, long toNanos) {
            check(fromNanos >= 0 && toNanos > fromNanos, "blackout needs 0 <= from < to");
            blackouts.add(new Blackout(fromNanos, toNanos));
            return this;
        }

        public Builder rateChange(long atNanos, long bitsPerSecond) {
            link.rateChange(atNanos, bitsPerSecond);
            return this;
        }

        /**
         * Wi-Fi-like bursty service: delivery happens only at service opportunities every
         * {@code intervalNanos}; everything due in between leaves together (aggregation).
         */
        public Builder bursty(long intervalNanos) {
            check(intervalNanos >= 0, "service interval must be >= 0");
            serviceInterval = intervalNanos;
            return this;
        }

        public LinkProfile build() {
            return new LinkProfile(this);
        }

        private static void check(boolean ok, String message) {
            if (!ok) {
                throw new IllegalArgumentException(message);
            }
        }
    }
}
