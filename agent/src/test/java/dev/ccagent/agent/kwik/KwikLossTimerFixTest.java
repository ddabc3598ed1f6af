package dev.ccagent.agent.kwik;

import org.junit.jupiter.api.Test;

import java.util.concurrent.locks.ReentrantLock;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class KwikLossTimerFixTest {

    @Test
    void enterTakesTheManagersLockAndExitReleasesIt() {
        Object manager = new Object();
        ReentrantLock lock = KwikLossTimerFix.enter(manager);
        assertSame(KwikLossTimerFix.lockFor(manager), lock);
        assertTrue(lock.isHeldByCurrentThread());
        ReentrantLock again = KwikLossTimerFix.enter(manager); // kwik re-entering the method
        assertSame(lock, again);
        KwikLossTimerFix.exit(again);
        assertTrue(lock.isHeldByCurrentThread());
        KwikLossTimerFix.exit(lock);
        assertFalse(lock.isHeldByCurrentThread());
        KwikLossTimerFix.exit(null); // the enter advice failed open: nothing to release
        KwikLossTimerFix.exit(lock); // not held: no IllegalMonitorStateException
    }

    @Test
    void onePassWaitsForTheOtherOnTheSameManager() throws Exception {
        Object manager = new Object();
        ReentrantLock lock = KwikLossTimerFix.enter(manager);
        boolean[] gotIt = new boolean[1];
        Thread other = new Thread(() -> gotIt[0] = KwikLossTimerFix.lockFor(manager).tryLock());
        other.start();
        other.join(5_000);
        assertFalse(gotIt[0]);
        KwikLossTimerFix.exit(lock);
    }
}
