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
 *
 * <p>Robustness: the thread is created with a null context class loader, no inherited thread
 * locals, the agent's own access-control context and the thread group given at construction (the
 * agent's, at install), so that a restart from an application thread pins nothing of the
 * application. When the thread has died (an error escaped, it was stopped) or has not run for
 * {@link #STALL_NANOS} while a deadline is overdue, the next {@link #schedule} starts a new one, which
 * takes over the pending deadlines (overdue ones fire at once). A paced kwik sender calls
 * {@code schedule} again at the latest after kwik's own maximum wait (5 s), so no paced connection
 * waits forever. An interrupt of the thread is cleared, never turned into a busy loop.
 */
public final class WakeupTimer implements AutoCloseable {

    /** How long an overdue deadline may wait on a thread that shows no progress before it is replaced. */
    static final long STALL_NANOS = 1_000_000_000L;
    /** Longest park: the thread shows progress (see {@link #lastLoop}) at least this often. */
    static final long MAX_PARK_NANOS = 250_000_000L;

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

    private static final java.lang.invoke.MethodHandle WAKE;

    static {
        try {
            WAKE = java.lang.invoke.MethodHandles.publicLookup().findVirtual(Target.class, "wake",
                    java.lang.invoke.MethodType.methodType(void.class));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * {@link Target#wake}, called through a handle held in a plain field: not a constant to the JIT, so it inlines
     * no target into {@link #loop}. Targets are defined in the applications' loaders (kwik's controller adapter);
     * inlined, their constants would stay reachable from the loop's compiled frame for as long as the thread
     * lives, and keep an undeployed application's loader (see {@link AgentScheduler}).
     */
    private java.lang.invoke.MethodHandle waker = WAKE;

    private Entry[] heap = new Entry[64];
    private int size;
    private final String name;
    private final ThreadGroup group;
    private volatile Thread thread;
    private volatile boolean running = true;
    /** Set by the thread itself when it leaves its loop for any reason (also by an error). */
    private volatile boolean threadExited;
    /** {@link System#nanoTime()} of the thread's last loop iteration. */
    private volatile long lastLoop;
    private long wakeups;
    private long restarts;

    public WakeupTimer(String name) {
        this(name, null);
    }

    /** Starts the timer's thread in {@code group} (null: the current thread's group). */
    public WakeupTimer(String name, ThreadGroup group) {
        this.name = name;
        this.group = group;
        synchronized (this) {
            startThread();
        }
    }

    /** Caller holds the lock (or constructs). Allocates; only at start and on a restart. */
    private void startThread() {
        // the agent's own access-control context, not the (application) caller's, no context loader, and a
        // run() of the agent's own (AgentThreads)
        Thread t = AgentThreads.newDaemon(group, name, this::loop);
        lastLoop = System.nanoTime();
        threadExited = false;
        thread = t;
        t.start();
    }

    /**
     * On the dying thread itself (its context is the timer's own, clean one): starts the successor,
     * which takes over the pending deadlines. If that fails too, the next {@link #schedule} retries.
     */
    private void restartFromDyingThread() {
        try {
            synchronized (this) {
                if (running && threadExited) {
                    restarts++;
                    startThread();
                }
            }
            AgentLog.warnOnce("wakeup-timer-died", "pacing timer thread died; started a new one", null);
        } catch (Throwable ignored) {
            // threadExited stays set: the next schedule() starts one
        }
    }

    /** Caller holds the lock: replaces a dead or stuck thread. */
    private void checkHealth(long now) {
        Thread t = thread;
        boolean dead = threadExited;
        if (!dead && size > 0 && now - heap[0].deadline > STALL_NANOS && now - lastLoop > STALL_NANOS) {
            dead = true; // overdue and no progress: stuck, or died without running its finally block
        }
        if (dead && running) {
            restarts++;
            AgentLog.warnOnce("wakeup-timer-restart", "pacing timer thread " + (t != null && t.isAlive()
                    ? "stalled" : "died") + "; started a new one (pending wake-ups carry over)", null);
            startThread();
        }
    }

    /** Wakes {@code e}'s target at {@code deadlineNanos} ({@link System#nanoTime()}); keeps an earlier deadline. */
    public void schedule(Entry e, long deadlineNanos) {
        boolean newHead;
        synchronized (this) {
            if (!running) {
                throw new IllegalStateException("pacing timer stopped");
            }
            checkHealth(System.nanoTime());
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

    /** Threads started after the first one (a dead or stuck thread replaced). */
    public synchronized long restarts() {
        return restarts;
    }

    /** The timer's current thread (tests, status). */
    public Thread thread() {
        return thread;
    }

    private void loop() {
        Thread self = Thread.currentThread();
        try {
            while (running && thread == self) {
                Thread.interrupted(); // an interrupt would make park return at once: a busy loop
                Entry due = null;
                long wait = -1;
                synchronized (this) {
                    long now = System.nanoTime();
                    lastLoop = now;
                    if (size > 0) {
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
                        // through a method handle the JIT does not know (see waker): the loop's compiled frame, which
                        // stays on this thread's stack, inlines no target and so keeps no application class reachable
                        waker.invokeExact(due.target);
                    } catch (Throwable t) {
                        AgentLog.warnOnce("wakeup-timer", "a paced sender could not be woken", t);
                    }
                } else if (wait < 0) {
                    LockSupport.parkNanos(this, MAX_PARK_NANOS); // idle: wake now and then to show progress
                } else {
                    LockSupport.parkNanos(this, Math.min(wait, MAX_PARK_NANOS));
                }
            }
        } finally {
            if (thread == self) {
                threadExited = true;
                if (running) {
                    restartFromDyingThread(); // stopped or an error escaped: a successor at once
                }
            }
        }
    }

    @Override
    public void close() {
        Thread t;
        synchronized (this) {
            running = false;
            t = thread;
            while (size > 0) {
                removeAt(size - 1);
            }
        }
        LockSupport.unpark(t);
        try {
            t.join(2_000);
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
