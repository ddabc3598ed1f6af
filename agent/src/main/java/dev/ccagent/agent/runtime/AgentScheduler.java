package dev.ccagent.agent.runtime;

import dev.ccagent.agent.log.AgentLog;

import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * One daemon thread that runs the agent's periodic work (the spin detector's windows, connection
 * summaries, fallback summaries) — on purpose not a {@code ScheduledThreadPoolExecutor}.
 *
 * <p>Why: a web application's class loader stayed reachable for good after it was undeployed
 * ({@code KwikRedeployTest}, now and then), with no path to it in a heap dump. The hold was a compiled
 * frame: the agent's executor threads sat, between ticks, in the JDK's {@code ThreadPoolExecutor.runWorker},
 * which the JIT had compiled with the application's own pool tasks (kwik's) inlined; a compiled frame on a
 * stack keeps the objects its code embeds reachable (constants such as the application's enum values and
 * lambdas), so the idle agent thread kept the application's loader. Recompiling {@code runWorker} in the
 * held JVM (a retransformation of the JDK's executor classes) released the loader at the next GC. Here the
 * frames an idle agent thread keeps are the agent's own ({@link AgentThreads.AgentThread#run}, {@link #loop}),
 * and each task is called through a {@link MethodHandle} read from a field: the JIT does not inline through a
 * method handle that is not a constant, so no compiled frame of the loop embeds anything a task reaches
 * (the task's own compiled frames exist only while it runs). Nothing is allocated per tick.
 */
public final class AgentScheduler implements AutoCloseable {

    /** A periodic task; {@link #cancel()} stops it. */
    public final class Task {
        final Runnable body;
        final long periodNanos;
        final boolean fixedRate;
        long next;
        volatile boolean cancelled;

        Task(Runnable body, long initialDelayNanos, long periodNanos, boolean fixedRate) {
            this.body = body;
            this.periodNanos = periodNanos;
            this.fixedRate = fixedRate;
            this.next = System.nanoTime() + initialDelayNanos;
        }

        /** No run starts after this returns (one in progress finishes). */
        public void cancel() {
            cancelled = true;
            synchronized (AgentScheduler.this) {
                tasks.remove(this);
            }
        }
    }

    private final List<Task> tasks = new ArrayList<>();
    private final List<Runnable> once = new ArrayList<>();
    private final Thread thread;
    /** Not final and not static: the JIT treats it as a value it does not know, so it inlines no task. */
    private MethodHandle runner = OpaqueRunnable.RUN;
    private volatile boolean running = true;

    /** Starts the scheduler's thread, named {@code name}. */
    public AgentScheduler(String name) {
        thread = AgentThreads.newDaemon(name, this::loop);
        thread.start();
    }

    /** Runs {@code body} every {@code periodNanos} after the end of the previous run, the first after {@code delayNanos}. */
    public Task withFixedDelay(Runnable body, long delayNanos, long periodNanos) {
        return add(new Task(body, delayNanos, periodNanos, false));
    }

    /** Runs {@code body} every {@code periodNanos} from the first run (after {@code delayNanos}); late runs do not pile up. */
    public Task atFixedRate(Runnable body, long delayNanos, long periodNanos) {
        return add(new Task(body, delayNanos, periodNanos, true));
    }

    private Task add(Task t) {
        if (t.periodNanos <= 0) {
            throw new IllegalArgumentException("period must be positive: " + t.periodNanos);
        }
        synchronized (this) {
            if (!running) {
                throw new IllegalStateException("scheduler " + thread.getName() + " stopped");
            }
            tasks.add(t);
        }
        LockSupport.unpark(thread);
        return t;
    }

    /**
     * Runs {@code body} once on the scheduler's thread and waits for it at most {@code timeout}; false when it
     * did not finish in time or the scheduler has stopped.
     */
    public boolean runAndWait(Runnable body, long timeout, TimeUnit unit) throws InterruptedException {
        CompletableFuture<Void> done = new CompletableFuture<>();
        synchronized (this) {
            if (!running) {
                return false;
            }
            once.add(() -> {
                try {
                    body.run();
                } finally {
                    done.complete(null);
                }
            });
        }
        LockSupport.unpark(thread);
        try {
            done.get(timeout, unit);
            return true;
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            return false;
        }
    }

    /** The scheduler's thread (tests, status). */
    public Thread thread() {
        return thread;
    }

    private void loop() {
        Runnable[] due = new Runnable[4];
        while (running) {
            int n = 0;
            long wait = 250_000_000L;
            synchronized (this) {
                long now = System.nanoTime();
                // indexed loops: an iterator is an allocation per tick wherever the JIT has not removed it
                for (int i = 0; i < once.size(); i++) {
                    due = put(due, n++, once.get(i));
                }
                once.clear();
                for (int i = 0; i < tasks.size(); i++) {
                    Task t = tasks.get(i);
                    long left = t.next - now;
                    if (left <= 0) {
                        due = put(due, n++, t.body);
                        // fixed rate: the next slot after now, so a late run does not pile up; fixed delay: set after the run
                        t.next = t.fixedRate ? t.next + ((now - t.next) / t.periodNanos + 1) * t.periodNanos : Long.MAX_VALUE;
                    } else {
                        wait = Math.min(wait, left);
                    }
                }
            }
            for (int i = 0; i < n; i++) {
                Runnable r = due[i];
                due[i] = null;
                try {
                    runner.invokeExact(r);
                } catch (Throwable t) {
                    AgentLog.warnOnce("scheduler-" + thread.getName(), "a periodic task of " + thread.getName()
                            + " failed; it keeps running", t);
                }
            }
            if (n > 0) {
                synchronized (this) {
                    long end = System.nanoTime();
                    for (int i = 0; i < tasks.size(); i++) {
                        Task t = tasks.get(i);
                        if (t.next == Long.MAX_VALUE) {
                            t.next = end + t.periodNanos;
                        }
                    }
                }
                continue;
            }
            Thread.interrupted(); // an interrupt would make park return at once: a busy loop
            LockSupport.parkNanos(this, wait);
        }
    }

    private static Runnable[] put(Runnable[] a, int i, Runnable r) {
        if (i == a.length) {
            a = java.util.Arrays.copyOf(a, a.length * 2);
        }
        a[i] = r;
        return a;
    }

    /** Stops the thread after the task in progress, without waiting for it. */
    public void shutdown() {
        synchronized (this) {
            running = false;
            tasks.clear();
            once.clear();
        }
        LockSupport.unpark(thread);
    }

    /** {@link #shutdown()}, then (from another thread) waits up to 2 s for the thread to end. */
    @Override
    public void close() {
        shutdown();
        if (Thread.currentThread() != thread) {
            try {
                thread.join(2_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
