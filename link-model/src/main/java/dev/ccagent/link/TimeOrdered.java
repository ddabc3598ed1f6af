package dev.ccagent.link;

/**
 * Something due at a time, ordered by that time and, among equal times, by the sequence number its
 * scheduler handed out: the simulator's events and the emulator's pending datagrams come out in
 * the order they were scheduled in.
 *
 * @param <T> the concrete type, compared only with its own kind
 */
public abstract class TimeOrdered<T extends TimeOrdered<T>> implements Comparable<T> {

    /** When it is due, nanoseconds. */
    public final long time;
    /** The order it was scheduled in, for equal times. */
    public final long seq;

    /** Earlier time first; for equal times, the lower sequence number. */
    @Override
    public final int compareTo(T o) {
        int c = Long.compare(time, o.time);
        return c != 0 ? c : Long.compare(seq, o.seq);
    }

    protected TimeOrdered(long time, long seq) {
        this.time = time;
        this.seq = seq;
    }
}
