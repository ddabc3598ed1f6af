package dev.ccagent.cc;

import java.util.Arrays;

/**
 * A reusable, growable list of packets (number, size, send time) carried by {@link AckEvent} and
 * {@link LossEvent}. The host clears and refills one instance per event; capacity grows (rarely,
 * by doubling) only when a single event carries more packets than ever before.
 */
public abstract class PacketBatch {

    private long[] packetNumbers;
    private long[] sentTimes;
    private int[] sizes;
    private int count;

    /** Bytes in flight as the host counted them just before this event removed any packet. */
    public long priorBytesInFlight;

    /** When the event happened (ack received, loss declared). */
    public long timeNanos;

    protected PacketBatch(int initialCapacity) {
        int capacity = Math.max(4, initialCapacity);
        packetNumbers = new long[capacity];
        sentTimes = new long[capacity];
        sizes = new int[capacity];
    }

    /** Empties the batch, keeping its arrays. */
    public void clearPackets() {
        count = 0;
    }

    /** Empties the batch for a new event at {@code timeNanos}, {@code priorBytesInFlight} in flight before it. */
    protected final void startEvent(long timeNanos, long priorBytesInFlight) {
        clearPackets();
        this.timeNanos = timeNanos;
        this.priorBytesInFlight = priorBytesInFlight;
    }

    public void addPacket(long packetNumber, long sentTimeNanos, int bytes) {
        if (count == packetNumbers.length) {
            int capacity = count * 2;
            packetNumbers = Arrays.copyOf(packetNumbers, capacity);
            sentTimes = Arrays.copyOf(sentTimes, capacity);
            sizes = Arrays.copyOf(sizes, capacity);
        }
        packetNumbers[count] = packetNumber;
        sentTimes[count] = sentTimeNanos;
        sizes[count] = bytes;
        count++;
    }

    public int count() {
        return count;
    }

    public long packetNumber(int i) {
        return packetNumbers[i];
    }

    public long sentTime(int i) {
        return sentTimes[i];
    }

    public int bytes(int i) {
        return sizes[i];
    }

    /** Sum of the packets' sizes. */
    public long totalBytes() {
        long sum = 0;
        for (int i = 0; i < count; i++) {
            sum += sizes[i];
        }
        return sum;
    }

    /** Index of the packet with the largest packet number, or -1 when empty. */
    public int indexOfLargest() {
        int best = -1;
        for (int i = 0; i < count; i++) {
            if (best < 0 || packetNumbers[i] > packetNumbers[best]) {
                best = i;
            }
        }
        return best;
    }

    /** The latest send time among the packets, or {@link Long#MIN_VALUE} when empty. */
    public long latestSentTime() {
        long latest = Long.MIN_VALUE;
        for (int i = 0; i < count; i++) {
            latest = Math.max(latest, sentTimes[i]);
        }
        return latest;
    }
}
