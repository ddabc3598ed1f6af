package dev.ccagent.agent.runtime;

import dev.ccagent.agent.log.AgentLog;

import java.util.Arrays;
import java.util.concurrent.locks.LockSupport;

/**
 * One daemon thread that wakes paced senders when their pacer budget refills.
 *
 * <p>Each connection owns one preallocated {@link Entry}; scheduling moves it in a binary heap, so
 * nothing is allocated per wake-up (a {@code ScheduledExecutorService} would allocate a task each
 * time). The thread parks with {@link LockSupport#parkNanos} until the earliest deadline: no busy
 * loop and no millisecond rounding (the precision is the OS timer slack, ~50 µs on Linux).
 */
public final class WakeupTimer implements AutoCloseable {

    /** What a deadline wakes. Called on the timer thread; must be quick and must not block. */
    @FunctionalInterface
    public interface Target {
        void wake();
    }

    /** A connection's slot in the timer. */
    public static final class Entry {
        final Target target;
        long deadline;
        int index = -1;

        public Entry(Target target) {
            this.target = target;
        }
    }

    private Entry[] heap = new Entry[64];
    private int size;
    private final Thread thread;
    private volatile boolean running = true;
    private long wakeups;

    public WakeupTimer(String name) {
        thread = new Thread(this::loop, name);
        thread.setDaemon(true);
        thread.start();
    }

    /** Wakes {@code e}'s target at {@code deadlineNanos} ({@link System#nanoTime()}); keeps an earlier deadline. */
    public void schedule(Entry e, long deadlineNanos) {
        boolean newHead;
        synchronized (this) {
            if (e.index >= 0) {
                if (e.deadline <= deadlineNanos) {
                    return;
                }
                e.deadline = deadlineNanos;
                siftUp(e.index);
            } else {
                if (size == heap.length) {
                    heap = Arrays.copyOf(heap, size * 2); // grows with the number of connections, not packets
                }
                e.deadline = deadlineNanos;
                e.index = size;
                heap[size++] = e;
                siftUp(e.index);
            }
            newHead = heap[0] == e;
        }
        if (newHead) {
            LockSupport.unpark(thread);
        }
    }

    /** Removes a pending wake-up (connection closed). */
    public void cancel(Entry e) {
        synchronized (this) {
            if (e.index >= 0) {
                removeAt(e.index);
            }
        }
    }

    /** Wake-ups delivered so far. */
    public synchronized long wakeups() {
        return wakeups;
    }

    public synchronized int pending() {
        return size;
    }

    private void loop() {
        while (running) {
            Entry due = null;
            long wait = -1;
            synchronized (this) {
                if (size > 0) {
                    long now = System.nanoTime();
                    if (heap[0].deadline <= now) {
                        due = heap[0];
                        removeAt(0);
                        wakeups++;
                    } else {
                        wait = heap[0].deadline - now;
                    }
                }
            }
            if (due != null) {
                try {
                    due.target.wake();
                } catch (Throwable t) {
                    AgentLog.warnOnce("wakeup-timer", "a paced sender could not be woken", t);
                }
            } else if (wait < 0) {
                LockSupport.park(this);
            } else {
                LockSupport.parkNanos(this, wait);
            }
        }
    }

    @Override
    public void close() {
        running = false;
        LockSupport.unpark(thread);
        try {
            thread.join(2_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void removeAt(int i) {
        Entry removed = heap[i];
        removed.index = -1;
        size--;
        if (i == size) {
            heap[size] = null;
            return;
        }
        Entry last = heap[size];
        heap[size] = null;
        heap[i] = last;
        last.index = i;
        siftDown(i);
        siftUp(last.index);
    }

    private void siftUp(int i) {
        Entry e = heap[i];
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            Entry p = heap[parent];
            if (p.deadline <= e.deadline) {
                break;
            }
            heap[i] = p;
            p.index = i;
            i = parent;
        }
        heap[i] = e;
        e.index = i;
    }

    private void siftDown(int i) {
        Entry e = heap[i];
        int half = size >>> 1;
        while (i < half) {
            int child = 2 * i + 1;
            int right = child + 1;
            if (right < size && heap[right].deadline < heap[child].deadline) {
                child = right;
            }
            if (e.deadline <= heap[child].deadline) {
                break;
            }
            heap[i] = heap[child];
            heap[i].index = i;
            i = child;
        }
        heap[i] = e;
        e.index = i;
    }
}
