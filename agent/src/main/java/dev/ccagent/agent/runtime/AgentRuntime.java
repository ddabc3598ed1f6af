package dev.ccagent.agent.runtime;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.log.AgentLog;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The agent's live state, shared by every target module: the configuration new connections are
 * assigned from (null: detached, stock behaviour), per-arm connection counts, failure counters and
 * the pacing wake-up timer.
 */
public final class AgentRuntime {

    private static volatile AgentConfig config;
    private static volatile WakeupTimer timer;
    private static final Map<String, LongAdder> CONNECTIONS = new ConcurrentHashMap<>();
    private static final AtomicLong FALLBACKS = new AtomicLong();

    private AgentRuntime() {
    }

    /** The configuration for new connections, or null when the agent is detached or not configured. */
    public static AgentConfig config() {
        return config;
    }

    public static void setConfig(AgentConfig newConfig) {
        config = newConfig;
    }

    /** The shared pacing timer, started on first use. */
    public static WakeupTimer timer() {
        WakeupTimer t = timer;
        if (t == null) {
            synchronized (AgentRuntime.class) {
                t = timer;
                if (t == null) {
                    t = new WakeupTimer("ccagent-pacing-timer");
                    timer = t;
                }
            }
        }
        return t;
    }

    /** Stops the timer thread (detach, tests). */
    public static void stopTimer() {
        synchronized (AgentRuntime.class) {
            if (timer != null) {
                timer.close();
                timer = null;
            }
        }
    }

    /** Counts a connection assigned to {@code arm} ("default:bbr1", "canary:stock", ...). */
    public static void countConnection(String library, AgentConfig.Arm arm) {
        CONNECTIONS.computeIfAbsent(library + " " + arm.label() + ":" + arm.algorithm(), k -> new LongAdder()).increment();
    }

    /** Connections per library, arm and algorithm since start. */
    public static Map<String, Long> connectionCounts() {
        Map<String, Long> out = new TreeMap<>();
        CONNECTIONS.forEach((k, v) -> out.put(k, v.sum()));
        return out;
    }

    /** A connection fell back to the stock algorithm because our code failed; logged once per cause. */
    public static void recordFallback(String where, Throwable cause) {
        long n = FALLBACKS.incrementAndGet();
        AgentLog.warnOnce("fallback:" + where + ":" + cause.getClass().getName(),
                where + " failed; this connection continues with the stock algorithm (fallbacks so far: " + n + ")",
                cause);
    }

    public static long fallbacks() {
        return FALLBACKS.get();
    }
}
