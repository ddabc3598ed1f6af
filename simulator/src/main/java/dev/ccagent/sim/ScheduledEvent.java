package dev.ccagent.sim;

import dev.ccagent.link.TimeOrdered;

/** One entry of the {@link EventQueue}: ordered by time, then by the order it was scheduled in. */
final class ScheduledEvent extends TimeOrdered<ScheduledEvent> {
    final EventType type;
    /** Index of the flow the event belongs to, or -1. */
    final int flow;
    final Object payload;
    /** For timers: the token it was armed with, so a superseded timer can be recognised. */
    long seqToken;

    ScheduledEvent(long time, long seq, EventType type, int flow, Object payload) {
        super(time, seq);
        this.type = type;
        this.flow = flow;
        this.payload = payload;
    }
}
