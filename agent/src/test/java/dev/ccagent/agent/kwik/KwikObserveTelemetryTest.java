package dev.ccagent.agent.kwik;

import dev.ccagent.agent.connection.SendTelemetry;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The observe-only send-loop counters as the hooks drive them: the sender thread's connection found through its
 * first loop iteration, received packets through the side table, other threads counting nothing.
 */
class KwikObserveTelemetryTest {

    @Test
    void theSenderThreadsHooksCountItsConnection() throws Exception {
        Object sender = new Object();
        SendTelemetry t = KwikObserveTelemetry.track(sender, "ab12");
        Thread loop = new Thread(() -> {
            // one iteration that sends a data packet and an ACK-only one
            long before = KwikObserveTelemetry.loopEnter(sender);
            KwikObserveTelemetry.remainingCwnd(12_000);
            KwikObserveTelemetry.packetInFlight(1200);
            KwikObserveTelemetry.datagramSent();
            KwikObserveTelemetry.datagramSent();
            KwikObserveTelemetry.loopExit(before);
            // one that finds no room and sends nothing
            before = KwikObserveTelemetry.loopEnter(sender);
            KwikObserveTelemetry.remainingCwnd(0);
            KwikObserveTelemetry.loopExit(before);
        }, "sender-test");
        loop.start();
        loop.join();
        assertEquals(2, t.wakeups);
        assertEquals(1, t.emptyWakeups);
        assertEquals(2, t.loopExits);
        assertEquals(2, t.datagramsSent);
        assertEquals(1, t.inFlightPackets);
        assertEquals(1200, t.inFlightBytes);
        assertEquals(1, t.refusals);
        assertEquals("ab12", t.connectionId());
        assertEquals("server", t.role());
        assertNotNull(t.senderThread);
        KwikObserveTelemetry.senderStopped(sender);
    }

    /** kwik 0.10.0-0.10.3's spin: one iteration that never ends, its stream answering no frame again and again. */
    @Test
    void framesAnsweredWithNothingAreEmptyTurnsInsideOneIteration() throws Exception {
        Object sender = new Object();
        SendTelemetry t = KwikObserveTelemetry.track(sender, "cd34");
        Thread loop = new Thread(() -> {
            KwikObserveTelemetry.loopEnter(sender);
            for (int i = 0; i < 1000; i++) {
                KwikObserveTelemetry.framePulled(true);
            }
            KwikObserveTelemetry.framePulled(false); // a frame: not a turn of its own
        });
        loop.start();
        loop.join();
        assertEquals(1001, t.wakeups, "the iteration and 1,000 empty turns");
        assertEquals(1000, t.emptyWakeups);
        assertEquals(1000, t.loopExits, "the iteration itself has not ended");
        assertEquals(0, t.datagramsSent);
        KwikObserveTelemetry.senderStopped(sender);
    }

    @Test
    void otherThreadsCountNothingButReceivedPackets() throws Exception {
        Object sender = new Object();
        SendTelemetry t = KwikObserveTelemetry.track(sender, "");
        Thread other = new Thread(() -> {
            KwikObserveTelemetry.datagramSent();
            KwikObserveTelemetry.packetInFlight(1200);
            KwikObserveTelemetry.remainingCwnd(0);
            KwikObserveTelemetry.framePulled(true);
            KwikObserveTelemetry.packetReceived(sender); // the receiver thread: by the side table
            KwikObserveTelemetry.packetReceived(new Object()); // a sender not observed
        });
        other.start();
        other.join();
        assertEquals(0, t.datagramsSent + t.inFlightPackets + t.refusals + t.wakeups);
        assertEquals(1, t.packetsReceived);
        assertEquals("client", t.role());
        KwikObserveTelemetry.senderStopped(sender);
    }

    @Test
    void aSenderLoopOfAConnectionNotObservedCountsNothingAndLooksItUpOnce() throws Exception {
        Object unknown = new Object();
        int[] result = new int[1];
        Thread loop = new Thread(() -> {
            long before = KwikObserveTelemetry.loopEnter(unknown);
            KwikObserveTelemetry.datagramSent();
            KwikObserveTelemetry.loopExit(before);
            result[0] = (int) before;
        });
        loop.start();
        loop.join();
        assertEquals(0, result[0]);
        assertNull(KwikObserveTelemetry.telemetryOf(unknown));
    }

    /** The hooks allocate nothing once the sender thread knows its connection (the JVM's per-thread allocation counter). */
    @Test
    void theHooksDoNotAllocate() throws Exception {
        Object sender = new Object();
        SendTelemetry t = KwikObserveTelemetry.track(sender, "0a0b");
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        long[] allocated = new long[1];
        Thread loop = new Thread(() -> {
            KwikObserveTelemetry.loopEnter(sender); // the first iteration finds the connection
            for (int round = 0; round < 2; round++) { // the first round warms up (class loading, interpreter profiles)
                long before = threads.getThreadAllocatedBytes(Thread.currentThread().getId());
                for (int i = 0; i < 100_000; i++) {
                    long d = KwikObserveTelemetry.loopEnter(sender);
                    KwikObserveTelemetry.framePulled(true);
                    KwikObserveTelemetry.remainingCwnd(i & 1);
                    KwikObserveTelemetry.packetInFlight(1200);
                    KwikObserveTelemetry.datagramSent();
                    KwikObserveTelemetry.packetReceived(sender);
                    KwikObserveTelemetry.loopExit(d);
                }
                allocated[0] = threads.getThreadAllocatedBytes(Thread.currentThread().getId()) - before;
            }
        });
        loop.start();
        loop.join();
        assertEquals(400_001, t.wakeups, "the first iteration, then 200,000 iterations and 200,000 empty turns");
        assertEquals(200_000, t.packetsReceived);
        // a few hundred bytes at most for anything the measurement itself does: not one object per call
        assertTrue(allocated[0] < 16 * 1024, "allocated " + allocated[0] + " B in 100,000 rounds of every hook");
        KwikObserveTelemetry.senderStopped(sender);
    }

    @Test
    void theCloseEndsTheObservation() {
        Object sender = new Object();
        KwikObserveTelemetry.track(sender, "ef56");
        int before = KwikObserveTelemetry.observed();
        KwikObserveTelemetry.senderStopped(sender);
        assertEquals(before - 1, KwikObserveTelemetry.observed());
        assertNull(KwikObserveTelemetry.telemetryOf(sender));
        KwikObserveTelemetry.senderStopped(sender); // a second stop: nothing
        assertTrue(KwikObserveTelemetry.observed() >= 0);
    }
}
