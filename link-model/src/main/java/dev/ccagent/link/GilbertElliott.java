package dev.ccagent.link;

/**
 * Gilbert–Elliott burst loss, per packet: from the good state the chain enters the bad state with
 * {@code goodToBad} and leaves it with {@code badToGood}; in the bad state a packet is lost with
 * {@code lossInBad} (none in the good state). {@link #NONE} never loses anything.
 */
public final class GilbertElliott {

    /** No burst loss: the chain never leaves the good state. */
    public static final GilbertElliott NONE = new GilbertElliott(0, 1, 0);

    public final double goodToBad;
    public final double badToGood;
    public final double lossInBad;

    public GilbertElliott(double goodToBad, double badToGood, double lossInBad) {
        if (!(goodToBad >= 0 && goodToBad <= 1 && badToGood > 0 && badToGood <= 1 && lossInBad >= 0
                && lossInBad <= 1)) {
            throw new IllegalArgumentException("burst loss probabilities must be in [0, 1] (bad-to-good > 0)");
        }
        this.goodToBad = goodToBad;
        this.badToGood = badToGood;
        this.lossInBad = lossInBad;
    }

    /** Whether this chain can lose a packet at all. */
    public boolean losesPackets() {
        return goodToBad > 0 && lossInBad > 0;
    }

    @Override
    public String toString() {
        return "GilbertElliott[good->bad " + goodToBad + ", bad->good " + badToGood + ", loss in bad "
                + lossInBad + "]";
    }
}
