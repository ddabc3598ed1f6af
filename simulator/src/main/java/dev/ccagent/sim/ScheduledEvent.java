package dev.ccagent.sim;

/** One entry of the {@link EventQueue}: ordered by time, then by the order it was scheduled in. */
final class ScheduledEvent implements Comparable<ScheduledEvent> {
    final long time;
    final long seq;
    final EventType type;
    /** Index of the flow the event belongs to, or -1. */
    final int flow;
    final Object payload;
    /** For timers: the token it was armed with, so a superseded timer can be recognised. */
    long seqToken;

    ScheduledEvent(long time, long seq, EventType type, int flow, Object payload) {
        this.time = time;
        this.seq = seq;
        this.type = type;
        this.flow = flow;
        this.payload = payload;
    }

    @Override
    public int compareTo(ScheduledEvent o) {
        int c = Long.compare(time, o.time);
        return c != 0 ? c : Long.compare(seq, o.seq);
    }
}
