package dev.ccagent.link;

import java.util.ArrayList;
import java.util.List;

/**
 * What one direction of a network path does to packets, independent of whoever plays it out (the
 * discrete-event simulator, the UDP link emulator): a serialisation rate with a schedule of
 * changes, a drop-tail buffer in front of it, independent random loss and Gilbert–Elliott burst
 * loss, and a one-way propagation delay. Immutable; built with {@link #builder()}. Times are
 * nanoseconds, rates bits per second, sizes bytes.
 *
 * <p>The defaults describe a transparent direction: no rate limit (0), no delay, no loss, an
 * unbounded buffer ({@link Long#MAX_VALUE}). Users that need more (a simulator needs a rate) check
 * it themselves.
 */
public final class LinkModel {

    private final long rateBitsPerSecond;
    private final List<RateChange> rateChanges;
    private final long delayNanos;
    private final double lossProbability;
    private final GilbertElliott burstLoss;
    private final long bufferBytes;

    private LinkModel(Builder b) {
        rateBitsPerSecond = b.rate;
        List<RateChange> changes = new ArrayList<>(b.rateChanges);
        changes.sort((x, y) -> Long.compare(x.atNanos, y.atNanos)); // stable: equal times keep their order
        rateChanges = List.copyOf(changes);
        delayNanos = b.delay;
        lossProbability = b.loss;
        burstLoss = b.burstLoss;
        bufferBytes = b.buffer;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The rate at start; 0 = unlimited. */
    public long rateBitsPerSecond() {
        return rateBitsPerSecond;
    }

    /** The rate schedule, sorted by time (changes at equal times in the order they were added). */
    public List<RateChange> rateChanges() {
        return rateChanges;
    }

    /** The rate in force {@code sinceStart} nanoseconds after the link started (0 = unlimited). */
    public long rateAt(long sinceStart) {
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

    /** One-way propagation delay. */
    public long delayNanos() {
        return delayNanos;
    }

    /** Independent random loss per packet, in [0, 1). */
    public double lossProbability() {
        return lossProbability;
    }

    /** Burst loss on top of the random loss; {@link GilbertElliott#NONE} when there is none. */
    public GilbertElliott burstLoss() {
        return burstLoss;
    }

    /** Drop-tail buffer in front of the serialiser; {@link Long#MAX_VALUE} = unbounded. */
    public long bufferBytes() {
        return bufferBytes;
    }

    public static final class Builder {
        private long rate;
        private final List<RateChange> rateChanges = new ArrayList<>();
        private long delay;
        private double loss;
        private GilbertElliott burstLoss = GilbertElliott.NONE;
        private long buffer = Long.MAX_VALUE;

        private Builder() {
        }

        /** Serialisation rate at start; 0 = unlimited. */
        public Builder rate(long bitsPerSecond) {
            check(bitsPerSecond >= 0, "rate must be >= 0");
            rate = bitsPerSecond;
            return this;
        }

        /** The rate becomes {@code bitsPerSecond} at {@code atNanos} since start. */
        public Builder rateChange(long atNanos, long bitsPerSecond) {
            return rateChange(new RateChange(atNanos, bitsPerSecond));
        }

        public Builder rateChange(RateChange change) {
            rateChanges.add(change);
            return this;
        }

        /** One-way propagation delay. */
        public Builder delay(long nanos) {
            check(nanos >= 0, "delay must be >= 0");
            delay = nanos;
            return this;
        }

        /** Independent random loss per packet. */
        public Builder loss(double p) {
            check(p >= 0 && p < 1, "loss must be in [0, 1)");
            loss = p;
            return this;
        }

        /** Gilbert–Elliott burst loss (see {@link GilbertElliott}). */
        public Builder burstLoss(double goodToBad, double badToGood, double lossInBad) {
            return burstLoss(new GilbertElliott(goodToBad, badToGood, lossInBad));
        }

        public Builder burstLoss(GilbertElliott chain) {
            check(chain != null, "burst loss must not be null (GilbertElliott.NONE for none)");
            burstLoss = chain;
            return this;
        }

        /** Drop-tail buffer in front of the serialiser, bytes. */
        public Builder buffer(long bytes) {
            check(bytes > 0, "buffer must be > 0");
            buffer = bytes;
            return this;
        }

        public LinkModel build() {
            return new LinkModel(this);
        }

        private static void check(boolean ok, String message) {
            if (!ok) {
                throw new IllegalArgumentException(message);
            }
        }
    }
}
