package dev.ccagent.agent.kwik;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * The work-around ({@code fix.kwik-stream-stall}, on by default where the race is) for a race in kwik 0.10.7-0.10.9
 * {@code StreamOutputStreamImpl.scheduleSendStreamFrameRequest}: it reads
 * {@code sendRequestsQueued}, queues a send request when it saw 0, and only then increments. The
 * sender thread can take the request and decrement first (to -1); its own re-schedule then sees
 * -1 and queues nothing, the late increment brings the counter back to 0, and the stream is left
 * with buffered data and no queued request until a loss, a flow-control update or the idle timeout.
 *
 * <p>The fix claims the slot atomically before the request becomes visible: inside that one method
 * the {@code get()} becomes {@link #claim} (compare-and-set 0 → 1) and the {@code incrementAndGet()}
 * becomes {@link #alreadyClaimed}. Public because the substituted calls live in kwik's class.
 */
public final class KwikStreamStallFix {

    private KwikStreamStallFix() {
    }

    /** Replaces {@code sendRequestsQueued.get()}: 0 (and the slot is ours) only if it was free. */
    public static int claim(AtomicInteger queued) {
        return queued.compareAndSet(0, 1) ? 0 : 1;
    }

    /** Replaces {@code sendRequestsQueued.incrementAndGet()}: the claim already counted the request. */
    public static int alreadyClaimed(AtomicInteger queued) {
        return queued.get();
    }
}
