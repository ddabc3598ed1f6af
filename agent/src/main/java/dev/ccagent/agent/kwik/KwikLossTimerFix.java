package dev.ccagent.agent.kwik;

import java.util.concurrent.locks.ReentrantLock;

/**
 * The opt-in work-around ({@code fix.kwik-loss-timer=on}) for a race in kwik 0.10.x
 * {@code RecoveryManager.setLossDetectionTimer()}: it decides (from the loss detectors and the
 * handshake state) and only then reschedules or cancels ({@code unschedule()}) the one loss-detection
 * timer, with no lock around both. It runs on kwik's sender thread (every in-flight packet sent) and on
 * its receiver thread (ACKs, handshake confirmed, keys discarded), so one pass's late cancel can remove
 * the timer the other pass has just armed. The case measured in {@code KwikChurnTest}'s stalls: a
 * client's receiver processes HANDSHAKE_DONE, discards the Handshake space and finds nothing in flight
 * (the request's datagram is sent but the sender thread has not yet registered it), so it decides to
 * cancel; the sender registers the request and arms the application-space timer; the receiver's cancel
 * then removes it. If the request was lost, it is never retransmitted and the connection ends in its
 * idle timeout.
 *
 * <p>The fix runs the whole method under one lock per {@code RecoveryManager} (the advice in
 * {@link KwikLossTimerFixModule}); a pass then sees the state the other pass left and the last pass's
 * decision is the one that stands. The lock is one of {@link #STRIPES} fixed {@link ReentrantLock}s chosen
 * by the manager's identity hash: nothing is allocated per call or per connection, and two connections
 * sharing a stripe only wait for each other's short timer update. Under it kwik takes only its own
 * {@code scheduleLock}, its scheduler's and its logger's locks, none of which is held by a thread that
 * then calls {@code setLossDetectionTimer}, so no lock-order cycle is added. Reentrant because kwik may
 * call the method again from inside (it does not today).
 */
public final class KwikLossTimerFix {

    /** Number of locks (a power of two). */
    static final int STRIPES = 64;

    private static final ReentrantLock[] LOCKS = new ReentrantLock[STRIPES];

    static {
        for (int i = 0; i < STRIPES; i++) {
            LOCKS[i] = new ReentrantLock();
        }
    }

    private KwikLossTimerFix() {
    }

    /** The lock for one {@code RecoveryManager}, taken (called at the start of setLossDetectionTimer). */
    public static ReentrantLock enter(Object recoveryManager) {
        ReentrantLock lock = lockFor(recoveryManager);
        lock.lock();
        return lock;
    }

    /** Releases what {@link #enter} took (called on every way out of setLossDetectionTimer). */
    public static void exit(ReentrantLock lock) {
        if (lock != null && lock.isHeldByCurrentThread()) {
            lock.unlock();
        }
    }

    static ReentrantLock lockFor(Object recoveryManager) {
        return LOCKS[System.identityHashCode(recoveryManager) & (STRIPES - 1)];
    }
}
