package dev.ccagent.agent.runtime;

import org.junit.jupiter.api.Test;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AgentSchedulerTest {

    static final long MS = 1_000_000L;

    @Test
    void runsPeriodicTasksUntilCancelledAndSurvivesAFailingOne() throws Exception {
        try (AgentScheduler s = new AgentScheduler("test-scheduler")) {
            CountDownLatch five = new CountDownLatch(5);
            AtomicInteger failing = new AtomicInteger();
            AgentScheduler.Task t = s.withFixedDelay(five::countDown, 0, 5 * MS);
            s.atFixedRate(() -> {
                failing.incrementAndGet();
                throw new IllegalStateException("expected by the test");
            }, 0, 5 * MS);
            // a hang guard: 5 runs 5 ms apart take about 25 ms (the class takes 0.48-0.58 s in 16 runs), 400x under 10 s
            assertTrue(five.await(10, TimeUnit.SECONDS), "5 runs of the periodic task beside a failing one");
            // not chance: one thread runs both, and every pass that runs this task finds the fixed-rate one due too
            // (its next slot is never later than this task's), so by the 5th run it has run at least 3 times
            assertTrue(failing.get() >= 2, "the failing task keeps being run: " + failing.get());
            t.cancel();
            long after = five.getCount();
            AtomicInteger later = new AtomicInteger();
            s.withFixedDelay(later::incrementAndGet, 0, 5 * MS);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (later.get() < 3 && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertTrue(later.get() >= 3, "a task added later runs"); // a hang guard: 3 runs take ~10 ms of the 10 s
            assertEquals(after, five.getCount(), "a cancelled task does not run again");
        }
    }

    @Test
    void runAndWaitRunsOnTheSchedulersThreadAndCloseEndsIt() throws Exception {
        AgentScheduler s = new AgentScheduler("test-scheduler-2");
        AtomicReference<Thread> ran = new AtomicReference<>();
        assertTrue(s.runAndWait(() -> ran.set(Thread.currentThread()), 5, TimeUnit.SECONDS));
        assertSame(s.thread(), ran.get());
        assertTrue(s.thread().isDaemon());
        assertEquals(null, s.thread().getContextClassLoader());
        s.close();
        assertFalse(s.thread().isAlive(), "close() waits for the thread");
        assertFalse(s.runAndWait(() -> { }, 1, TimeUnit.SECONDS), "nothing runs after close");
    }

    /**
     * The calls through the method handle allocate nothing: the JVM's per-thread allocation counter of the
     * scheduler's and the pacing timer's threads over thousands of ticks and wake-ups (after a warm-up, so that
     * the JIT has compiled the loops) stays below what one object per call would cost. It found the iterators
     * of the scheduler's first loop (about 150 B per tick).
     */
    @Test
    void ticksAndWakeUpsAllocateNothing() throws Exception {
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        org.junit.jupiter.api.Assumptions.assumeTrue(mx instanceof com.sun.management.ThreadMXBean
                && ((com.sun.management.ThreadMXBean) mx).isThreadAllocatedMemorySupported(), "no allocation counter");
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) mx;
        threads.setThreadAllocatedMemoryEnabled(true);
        AtomicInteger ticks = new AtomicInteger();
        AtomicInteger wakes = new AtomicInteger();
        try (AgentScheduler s = new AgentScheduler("test-scheduler-alloc");
             WakeupTimer w = new WakeupTimer("test-wakeup-alloc")) {
            s.atFixedRate(ticks::incrementAndGet, 0, 20_000); // 20 us: as often as the machine manages
            WakeupTimer.Entry e = new WakeupTimer.Entry(wakes::incrementAndGet);
            for (int round = 0; round < 2; round++) { // round 0 warms up, round 1 is measured
                long t0 = threads.getThreadAllocatedBytes(s.thread().getId());
                long w0 = threads.getThreadAllocatedBytes(w.thread().getId());
                int ticks0 = ticks.get();
                int wakes0 = wakes.get();
                long roundEnd = System.nanoTime() + 30_000_000_000L;
                while ((wakes.get() - wakes0 < 5_000 || ticks.get() - ticks0 < 2_000) && System.nanoTime() < roundEnd) {
                    w.schedule(e, System.nanoTime()); // due at once: the timer's thread wakes the target
                    long deadline = System.nanoTime() + 1_000_000_000L;
                    while (w.pending() > 0 && System.nanoTime() < deadline) {
                        Thread.onSpinWait();
                    }
                }
                long tickBytes = threads.getThreadAllocatedBytes(s.thread().getId()) - t0;
                long wakeBytes = threads.getThreadAllocatedBytes(w.thread().getId()) - w0;
                int n = ticks.get() - ticks0;
                int m = wakes.get() - wakes0;
                System.out.printf("[test] round %d: %d ticks %d B, %d wake-ups %d B%n", round, n, tickBytes, m, wakeBytes);
                if (round == 1) {
                    // a hang guard: the loop above stops at these counts, or after 30 s; measured 2,000-2,024 ticks and
                    // 7.5k-80k wake-ups in round 1 (14 runs to 2026-12-04) within a class of 0.48-0.58 s
                    assertTrue(n >= 2_000 && m >= 5_000, "calls measured: " + n + " ticks, " + m + " wake-ups");
                    // one 16-byte object per call would be at least 32,000 B here; a few one-off objects are not a cost per call
                    // not timing or chance: 0 B in round 1 of all 14 runs to 2026-12-04 (round 0, the warm-up: 12.9-13.6 kB)
                    assertTrue(tickBytes < 4_096, tickBytes + " B over " + n + " ticks");
                    assertTrue(wakeBytes < 4_096, wakeBytes + " B over " + m + " wake-ups");
                }
            }
        }
    }

    /**
     * The reason for the class: between ticks its thread keeps only the agent's own frames, never JDK code the
     * application shares (Thread.run, ThreadPoolExecutor.runWorker), which the JIT compiles with the application's
     * code inlined (see AgentScheduler's class comment).
     */
    @Test
    void anIdleThreadKeepsOnlyTheAgentsFrames() throws Exception {
        try (AgentScheduler s = new AgentScheduler("test-scheduler-3");
             WakeupTimer w = new WakeupTimer("test-wakeup")) {
            s.withFixedDelay(() -> { }, 0, 1 * MS);
            Thread.sleep(50);
            for (Thread t : new Thread[] {s.thread(), w.thread()}) {
                StackTraceElement[] stack = t.getStackTrace();
                assertTrue(stack.length > 0, t.getName());
                StackTraceElement bottom = stack[stack.length - 1];
                assertEquals(AgentThreads.AgentThread.class.getName(), bottom.getClassName(), t.getName() + ": bottom frame");
                for (StackTraceElement f : stack) {
                    assertFalse(f.getClassName().startsWith("java.util.concurrent.ThreadPoolExecutor")
                            || (f.getClassName().equals("java.lang.Thread") && f.getMethodName().equals("run")),
                            t.getName() + " has a shared JDK frame: " + f);
                }
            }
        }
    }
}
