package dev.ccagent.link;

/**
 * A description built around one {@link LinkModel} (the emulator's link profile, the simulator's
 * configuration): the figures both read from that model.
 */
public interface HasLinkModel {

    /** The link direction this description plays out. */
    LinkModel link();

    /** The link's rate at start, bits per second; 0 = unlimited. */
    default long rateBitsPerSecond() {
        return link().rateBitsPerSecond();
    }

    /** The link's one-way propagation delay, nanoseconds. */
    default long delayNanos() {
        return link().delayNanos();
    }

    /** The link's independent random loss probability. */
    default double lossProbability() {
        return link().lossProbability();
    }

    /** The link's drop-tail buffer, bytes. */
    default long bufferBytes() {
        return link().bufferBytes();
    }
}
