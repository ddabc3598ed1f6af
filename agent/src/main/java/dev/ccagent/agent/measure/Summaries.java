package dev.ccagent.agent.measure;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.config.CanaryConfig;
import dev.ccagent.agent.runtime.AgentRuntime;

import java.util.ArrayList;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The live {@link ConnectionMeter}s and one daemon ticker thread ({@code ccagent-summary}, started
 * with the first meter, every second): a periodic ConnectionSummary for each connection whose last
 * summary is older than {@code summary.period}, and the rotation of every arm's RTT window (every
 * half {@code guard.window}). A meter that saw no packet for ten minutes is dropped from the table
 * (its library never reported the close) after a last periodic summary.
 */
public final class Summaries {

    /** Random id of this agent run, in every ConnectionSummary. */
    public static final String AGENT_INSTANCE = Long.toHexString(ThreadLocalRandom.current().nextLong() | Long.MIN_VALUE);

    static final long TICK_NANOS = 1_000_000_000L;
    static final long STALE_NANOS = 600_000_000_000L;

    private static final Set<ConnectionMeter> LIVE = ConcurrentHashMap.newKeySet();
    private static dev.ccagent.agent.runtime.AgentScheduler ticker;
    private static long lastRotation = System.nanoTime();

    private Summaries() {
    }

    static void register(ConnectionMeter meter) {
        ensureTicker(); // first: a meter is only held once the ticker that sweeps the table runs
        LIVE.add(meter);
    }

    static void unregister(ConnectionMeter meter) {
        LIVE.remove(meter);
    }

    /** Connections measured and not yet closed. */
    public static int live() {
        return LIVE.size();
    }

    private static synchronized void ensureTicker() {
        if (ticker != null) {
            return;
        }
        // often started from a library's thread (the first connection's): created so that it pins none of its loaders
        // the agent's own scheduler, not a JDK executor (see AgentScheduler)
        ticker = new dev.ccagent.agent.runtime.AgentScheduler("ccagent-summary");
        ticker.withFixedDelay(Summaries::tick, TICK_NANOS, TICK_NANOS);
    }

    static void tick() {
        try {
            AgentConfig config = AgentRuntime.config();
            CanaryConfig c = config != null ? config.canary() : CanaryConfig.DEFAULT;
            long now = System.nanoTime();
            synchronized (Summaries.class) {
                if (now - lastRotation >= c.windowNanos() / 2) {
                    lastRotation = now;
                    for (ArmStats a : ArmStats.all().values()) {
                        a.rtt.rotate();
                    }
                }
            }
            Guard.tick(now); // the guard's test: here, at most once a second, never on a library's thread
            for (ConnectionMeter m : LIVE) {
                if (now - m.lastSummary >= c.summaryPeriodNanos()) {
                    m.summary("periodic");
                }
                if (now - m.lastActivity() > STALE_NANOS) {
                    LIVE.remove(m);
                }
            }
        } catch (Throwable ignored) {
            // the ticker must survive anything
        }
    }

    /**
     * At detach: every live connection is closed out (its last summary, trigger {@code detach}; its
     * arm's open count goes down; later calls of its library into the meter are ignored), the table
     * is emptied and the ticker stops: nothing of the connections stays held (they keep running on
     * their library's controller). Returns how many were closed out. Never throws.
     */
    public static int detach() {
        int n = 0;
        for (ConnectionMeter m : new ArrayList<>(LIVE)) {
            try {
                m.closeAs("detach");
                n++;
            } catch (Throwable ignored) {
                // next one
            }
        }
        LIVE.clear();
        try {
            stop();
        } catch (Throwable ignored) {
            // a daemon thread with nothing to do
        }
        return n;
    }

    /** Stops the ticker (tests; the thread is a daemon otherwise). */
    public static synchronized void stop() {
        if (ticker != null) {
            ticker.shutdown(); // no wait: a tick in progress may want the lock held here
            ticker = null;
        }
    }
}
