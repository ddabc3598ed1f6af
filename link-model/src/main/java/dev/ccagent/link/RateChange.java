package dev.ccagent.link;

/** A change of a link's rate at a time since the link started, nanoseconds. */
public final class RateChange {
    public final long atNanos;
    public final long bitsPerSecond;

    public RateChange(long atNanos, long bitsPerSecond) {
        if (atNanos < 0 || bitsPerSecond <= 0) {
            throw new IllegalArgumentException("rate change needs a time >= 0 and a rate > 0");
        }
        this.atNanos = atNanos;
        this.bitsPerSecond = bitsPerSecond;
    }

    @Override
    public String toString() {
        return "RateChange[at " + atNanos + " ns: " + bitsPerSecond + " bit/s]";
    }
}
