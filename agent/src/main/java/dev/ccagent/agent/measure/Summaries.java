package dev.ccagent.agent.measure;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.config.CanaryConfig;
import dev.ccagent.agent.runtime.AgentRuntime;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

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
    private static ScheduledExecutorService ticker;
    private static long lastRotation = System.nanoTime();

    private Summaries() {
    }

    static void register(ConnectionMeter meter) {
        LIVE.add(meter);
        ensureTicker();
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
        ticker = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "ccagent-summary");
            t.setDaemon(true);
            return t;
        });
        ticker.scheduleWithFixedDelay(Summaries::tick, TICK_NANOS, TICK_NANOS, TimeUnit.NANOSECONDS);
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

    /** At detach: a summary of every live connection (they keep running on what they have). */
    public static void detach() {
        List<ConnectionMeter> meters = new ArrayList<>(LIVE);
        for (ConnectionMeter m : meters) {
            try {
                m.summary("detach");
            } catch (Throwable ignored) {
                // next one
            }
        }
    }

    /** Stops the ticker (tests; the thread is a daemon otherwise). */
    public static synchronized void stop() {
        if (ticker != null) {
            ticker.shutdownNow();
            ticker = null;
        }
    }
}
