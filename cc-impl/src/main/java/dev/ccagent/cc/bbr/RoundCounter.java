package dev.ccagent.cc.bbr;

/**
 * Counts packet-timed round trips the way draft-ietf-ccwg-bbr (§ "Round counting") and Linux
 * {@code tcp_bbr.c} do: a round ends when a packet sent after the previous round ended is
 * acknowledged, i.e. when the acked packet's delivered-at-send reaches the delivered count
 * recorded at the start of the round. Counting by delivered bytes instead of packet numbers makes
 * the count immune to packet number gaps and to ACKs that arrive out of order.
 */
public final class RoundCounter {

    private long nextRoundDelivered;
    private long count;
    private boolean roundStart;

    /**
     * Called once per ACK that acknowledged a tracked packet.
     *
     * @param priorDelivered delivered-at-send of the ACK's newest acknowledged packet
     * @param delivered      the connection's delivered count after the ACK
     * @return whether this ACK starts a new round
     */
    public boolean onAck(long priorDelivered, long delivered) {
        roundStart = false;
        if (priorDelivered >= nextRoundDelivered) {
            nextRoundDelivered = delivered;
            count++;
            roundStart = true;
        }
        return roundStart;
    }

    /** Marks that this ACK did not start a round (an ACK of nothing tracked). */
    public void noRound() {
        roundStart = false;
    }

    /** Ends the current round early: the next round starts once anything sent from now is acked. */
    public void startRoundNow(long delivered) {
        nextRoundDelivered = delivered;
    }

    /** Rounds counted so far. */
    public long count() {
        return count;
    }

    /** Whether the last ACK started a round. */
    public boolean isRoundStart() {
        return roundStart;
    }
}
