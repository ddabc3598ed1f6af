package dev.ccagent.agent.os;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@link KernelThreads} against the kernel itself: a thread's id names its own task in {@code /proc} (with the name
 * the JVM gave it there); a thread parked in a real {@code epoll_wait} (a NIO selector) is asleep and does not count
 * sleeps while it stays parked, and counts one when woken and parked again; a spinning thread is never asleep and
 * counts none. Linux only; the parsing runs everywhere.
 */
class KernelThreadsTest {

    @Test
    void aThreadsIdNamesItsTaskAndTheKernelTellsAParkedPollFromASpin() throws Exception {
        assumeTrue(Files.isDirectory(Path.of("/proc/thread-self/")), "no /proc/thread-self: not Linux");
        AtomicInteger parkedId = new AtomicInteger(-2);
        AtomicInteger spinningId = new AtomicInteger(-2);
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch started = new CountDownLatch(2);
        try (java.nio.channels.Selector selector = java.nio.channels.Selector.open()) {
            Thread parked = new Thread(() -> {
                parkedId.set(KernelThreads.currentId());
                started.countDown();
                try {
                    while (!stop.get()) {
                        selector.select(); // sun.nio.ch.EPoll.wait: epoll_wait until woken
                    }
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }, "kt-parked-in-poll");
            Thread spinning = new Thread(() -> {
                spinningId.set(KernelThreads.currentId());
                started.countDown();
                while (!stop.get()) {
                    Thread.onSpinWait();
                }
            }, "kt-spinning");
            parked.start();
            spinning.start();
            try {
                assertTrue(started.await(10, TimeUnit.SECONDS));
                int p = parkedId.get();
                int s = spinningId.get();
                assertTrue(p > 0 && s > 0, p + " " + s);
                assertNotEquals(p, s);
                assertEquals(KernelThreads.currentId(), KernelThreads.currentId(), "read once, kept");
                // the kernel's own name for each task: the JVM's thread name, cut to 15 characters
                assertEquals("kt-parked-in-po", comm(p));
                assertEquals("kt-spinning", comm(s));
                Thread.sleep(50); // the parked thread reaches its epoll_wait
                long parkedSleeps = KernelThreads.voluntarySwitches(p);
                long spinSleeps = KernelThreads.voluntarySwitches(s);
                assertTrue(parkedSleeps >= 1 && spinSleeps >= 0, parkedSleeps + " " + spinSleeps);
                // 20 reads 5 ms apart: parked in epoll_wait it is asleep at each and counts no new sleep; spinning it
                // is never asleep (on a CPU or waiting for one)
                for (int i = 0; i < 20; i++) {
                    Thread.sleep(5);
                    assertEquals('S', KernelThreads.state(p), "parked in its poll");
                    assertEquals(KernelThreads.RUNNING, KernelThreads.state(s), "spinning");
                }
                assertEquals(parkedSleeps, KernelThreads.voluntarySwitches(p), "one sleep, still the same");
                // woken, it returns from epoll_wait and parks again: one more sleep
                selector.wakeup();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (KernelThreads.voluntarySwitches(p) == parkedSleeps && System.nanoTime() < deadline) {
                    Thread.sleep(1);
                }
                assertTrue(KernelThreads.voluntarySwitches(p) > parkedSleeps, "woken and parked again");
            } finally {
                stop.set(true);
                selector.wakeup();
                parked.join(10_000);
                spinning.join(10_000);
            }
            // an ended thread has no state (its task outlives join() by a moment: the JVM's thread exit goes on)
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (KernelThreads.state(parkedId.get()) != KernelThreads.UNKNOWN && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            assertEquals(KernelThreads.UNKNOWN, KernelThreads.state(parkedId.get()), "an ended thread has no state");
            assertEquals(-1, KernelThreads.voluntarySwitches(parkedId.get()));
        }
        assertEquals(KernelThreads.UNKNOWN, KernelThreads.state(-1));
        assertEquals(-1, KernelThreads.voluntarySwitches(-1));
    }

    @Test
    void theStateFollowsTheLastParenthesisOfTheNameAndTheSleepsTheirLine() {
        assertEquals('S', KernelThreads.parseState("123 (a) b) (c) S 1 2 3\n"));
        assertEquals('R', KernelThreads.parseState("7 (epollEventLoopG) R 1"));
        assertEquals(KernelThreads.UNKNOWN, KernelThreads.parseState("7 (x)"));
        assertEquals(KernelThreads.UNKNOWN, KernelThreads.parseState(""));
        assertEquals(1234, KernelThreads.parseVoluntarySwitches("Name:\tx\nvoluntary_ctxt_switches:\t1234\n"
                + "nonvoluntary_ctxt_switches:\t9\n"));
        assertEquals(-1, KernelThreads.parseVoluntarySwitches("Name:\tx\nnonvoluntary_ctxt_switches:\t9\n"));
    }

    static String comm(int tid) throws java.io.IOException {
        return Files.readString(Path.of("/proc/self/task/" + tid + "/comm")).trim();
    }
}
