package dev.ccagent.it.emulator;

import java.util.ArrayList;
import java.util.List;

/**
 * What one direction of the emulated link does to datagrams. Immutable; built with
 * {@link #builder()}. Times are nanoseconds, rates bits per second, sizes bytes.
 */
public final class LinkProfile {

    /** A time window in which every datagram is dropped. */
    public static final class Blackout {
        public final long fromNanos;
        public final long toNanos;

        public Blackout(long fromNanos, long toNanos) {
            this.fromNanos = fromNanos;
            this.toNanos = toNanos;
        }
    }

    /** A change of the rate at a time since the emulator started. */
    public static final class RateChange {
        public final long atNanos;
        public final long bitsPerSecond;

        public RateChange(long atNanos, long bitsPerSecond) {
            this.atNanos = atNanos;
            this.bitsPerSecond = bitsPerSecond;
        }
    }

    final long rateBitsPerSecond;
    final long delayNanos;
    final long jitterNanos;
    final double lossProbability;
    final double gilbertGoodToBad;
    final double gilbertBadToGood;
    final double gilbertLossInBad;
    final long bufferBytes;
    final double reorderProbability;
    final long reorderExtraDelayNanos;
    final double duplicateProbability;
    final List<Blackout> blackouts;
    final List<RateChange> rateChanges;
    final long serviceIntervalNanos;

    private LinkProfile(Builder b) {
        rateBitsPerSecond = b.rate;
        delayNanos = b.delay;
        jitterNanos = b.jitter;
        lossProbability = b.loss;
        gilbertGoodToBad = b.goodToBad;
        gilbertBadToGood = b.badToGood;
        gilbertLossInBad = b.lossInBad;
        bufferBytes = b.buffer;
        reorderProbability = b.reorder;
        reorderExtraDelayNanos = b.reorderDelay;
        duplicateProbability = b.duplicate;
        blackouts = List.copyOf(b.blackouts);
        List<RateChange> changes = new ArrayList<>(b.rateChanges);
        changes.sort((x, y) -> Long.compare(x.atNanos, y.atNanos));
        rateChanges = List.copyOf(changes);
        serviceIntervalNanos = b.serviceInterval;
    }

    /** A direction that passes everything at once (no rate limit, no delay). */
    public static LinkProfile transparent() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    public long rateBitsPerSecond() {
        return rateBitsPerSecond;
    }

    public long delayNanos() {
        return delayNanos;
    }

    public long bufferBytes() {
        return bufferBytes;
    }

    /** The rate in force {@code sinceStart} nanoseconds after the emulator started (0 = unlimited). */
    long rateAt(long sinceStart) {
        long r = rateBitsPerSecond;
        for (RateChange c : rateChanges) {
            if (c.atNanos <= sinceStart) {
                r = c.bitsPerSecond;
            } else {
                break;
            }
        }
        return r;
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
        private long rate;
        private long delay;
        private long jitter;
        private double loss;
        private double goodToBad;
        private double badToGood = 1;
        private double lossInBad;
        private long buffer = Long.MAX_VALUE;
        private double reorder;
        private long reorderDelay;
        private double duplicate;
        private final List<Blackout> blackouts = new ArrayList<>();
        private final List<RateChange> rateChanges = new ArrayList<>();
        private long serviceInterval;

        /** Serialisation rate (token bucket of one packet); 0 = unlimited. */
        public Builder rate(long bitsPerSecond) {
            check(bitsPerSecond >= 0, "rate must be >= 0");
            rate = bitsPerSecond;
            return this;
        }

        /** One-way propagation delay. */
        public Builder delay(long nanos) {
            check(nanos >= 0, "delay must be >= 0");
            delay = nanos;
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
            check(p >= 0 && p < 1, "loss must be in [0, 1)");
            loss = p;
            return this;
        }

        /**
         * Gilbert–Elliott burst loss: from the good state the chain enters the bad state with
         * {@code goodToBad} per packet and leaves it with {@code badToGood}; in the bad state a
         * packet is lost with {@code lossInBad}.
         */
        public Builder burstLoss(double goodToBad, double badToGood, double lossInBad) {
            check(goodToBad >= 0 && goodToBad <= 1 && badToGood > 0 && badToGood <= 1 && lossInBad >= 0
                    && lossInBad <= 1, "burst loss probabilities must be in [0, 1] (bad-to-good > 0)");
            this.goodToBad = goodToBad;
            this.badToGood = badToGood;
            this.lossInBad = lossInBad;
            return this;
        }

        /** Drop-tail buffer in front of the serialiser, bytes. */
        public Builder buffer(long bytes) {
            check(bytes > 0, "buffer must be > 0");
            buffer = bytes;
            return this;
        }

        /** Drop-tail buffer as a multiple of this direction's rate × the given round-trip time. */
        public Builder bufferBdp(double multiple, long rttNanos) {
            check(rate > 0, "set the rate before a BDP-sized buffer");
            check(multiple > 0, "BDP multiple must be > 0");
            buffer = Math.max(1500, (long) (rate / 8.0 * rttNanos / 1e9 * multiple));
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
            check(atNanos >= 0 && bitsPerSecond > 0, "rate change needs a time >= 0 and a rate > 0");
            rateChanges.add(new RateChange(atNanos, bitsPerSecond));
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
