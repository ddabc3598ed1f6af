package dev.ccagent.sim;

import java.util.PriorityQueue;

/**
 * The simulation clock and its pending events. Events at equal times come out in the order they
 * were scheduled.
 */
final class EventQueue {
    private final PriorityQueue<ScheduledEvent> events = new PriorityQueue<>();
    private long now;
    private long eventSeq;

    /** The current simulated time, nanoseconds. */
    long now() {
        return now;
    }

    void advanceTo(long time) {
        now = time;
    }

    ScheduledEvent schedule(long time, EventType type, int flow, Object payload) {
        ScheduledEvent e = new ScheduledEvent(time, eventSeq++, type, flow, payload);
        events.add(e);
        return e;
    }

    boolean isEmpty() {
        return events.isEmpty();
    }

    /** Removes and returns the earliest event; does not move the clock. */
    ScheduledEvent poll() {
        return events.poll();
    }
}
