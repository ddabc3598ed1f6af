package dev.ccagent.agent.runtime;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.log.AgentLog;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
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
    /** The agent's thread group, taken at the first install (the timer's threads run in it). */
    private static volatile ThreadGroup timerGroup;
    private static final Map<String, LongAdder> CONNECTIONS = new ConcurrentHashMap<>();
    private static final AtomicLong FALLBACKS = new AtomicLong();
    private static final List<String> MODULES = new CopyOnWriteArrayList<>();
    private static final List<LoaderVerdict> VERDICTS = new CopyOnWriteArrayList<>();
    private static final List<String> ALARMS = new CopyOnWriteArrayList<>();
    /** Alarms kept for status; older ones are dropped. */
    static final int MAX_ALARMS = 100;
    /** Module verdicts kept for status and the chunk-start events (one per class loader seen); older ones are dropped. */
    static final int MAX_MODULES = 100;

    private AgentRuntime() {
    }

    /** The configuration for new connections, or null when the agent is detached or not configured. */
    public static AgentConfig config() {
        return config;
    }

    public static void setConfig(AgentConfig newConfig) {
        config = newConfig;
    }

    /**
     * The shared pacing timer. Started at install ({@link #startTimer()}); started here only when a
     * connection made before a detach still asks (it is created so that it pins nothing of the caller:
     * see {@link WakeupTimer}).
     */
    public static WakeupTimer timer() {
        WakeupTimer t = timer;
        if (t == null) {
            t = startTimer();
        }
        return t;
    }

    /**
     * Starts the pacing timer if it is not running: called at install from the agent's own thread
     * (premain or the attach listener), whose thread group the timer's thread joins.
     */
    public static WakeupTimer startTimer() {
        synchronized (AgentRuntime.class) {
            WakeupTimer t = timer;
            if (t == null) {
                ThreadGroup group = timerGroup;
                if (group == null) {
                    group = Thread.currentThread().getThreadGroup();
                    timerGroup = group;
                }
                t = new WakeupTimer("ccagent-pacing-timer", group);
                timer = t;
            }
            return t;
        }
    }

    /** Stops the timer thread (detach, tests); pending wake-ups are dropped. */
    public static void stopTimer() {
        WakeupTimer t;
        synchronized (AgentRuntime.class) {
            t = timer;
            timer = null;
        }
        if (t != null) {
            t.close();
        }
    }

    /** The running timer, or null (status, tests): never starts one. */
    public static WakeupTimer timerIfRunning() {
        return timer;
    }

    /** Counts a connection assigned to {@code arm} ("default:bbr1", "canary:stock", ...). */
    public static void countConnection(String library, AgentConfig.Arm arm) {
        CONNECTIONS.computeIfAbsent(library + " " + arm.label() + ":" + arm.algorithm(), k -> new LongAdder()).increment();
    }

    /**
     * Counts a connection under {@code arm} as its library words it: the arm's label and algorithm,
     * and what ran instead when that differs ("default:bbr ran cubic (refused: ...)").
     */
    public static void countConnection(String library, String arm) {
        CONNECTIONS.computeIfAbsent(library + " " + arm, k -> new LongAdder()).increment();
    }

    /** Connections per library, arm and algorithm since start. */
    public static Map<String, Long> connectionCounts() {
        Map<String, Long> out = new TreeMap<>();
        CONNECTIONS.forEach((k, v) -> out.put(k, v.sum()));
        return out;
    }

    /**
     * Our code failed at {@code where}, or the library refused what it asked ({@code cause} null), and the
     * connection went on without that part of the agent:
     * counted, and logged with {@code consequence} (what the connection does now, e.g. "the connection
     * runs the application's cubic") at the first of its cause, then summarised per cause every minute
     * ({@link FallbackLog}).
     */
    public static void recordFallback(String where, String consequence, Throwable cause) {
        FALLBACKS.incrementAndGet();
        FallbackLog.record(where, consequence, cause);
    }

    /**
     * The same, for a caller that states no consequence: the line then claims nothing about the
     * algorithm (the caller's own documentation says what is skipped).
     */
    public static void recordFallback(String where, Throwable cause) {
        recordFallback(where, "that part of the agent is skipped for this connection; its congestion control is"
                + " not changed by this failure", cause);
    }

    public static long fallbacks() {
        return FALLBACKS.get();
    }

    /** Records a target module's verdict for a class loader ("kwik 0.10.9 in app: applied"). */
    public static void recordModule(String verdict) {
        MODULES.add(verdict);
        while (MODULES.size() > MAX_MODULES) {
            MODULES.remove(0); // one per class loader that loads the library: bounded for loader churn
        }
    }

    /**
     * Records a target module's verdict for a class loader: its log line for status as
     * {@link #recordModule(String)} does, and the verdict itself for JFR ({@code dev.ccagent.ModuleVerdict},
     * now and at every chunk start while it is kept; as many kept as lines).
     */
    public static void recordModule(String line, LoaderVerdict verdict) {
        recordModule(line);
        VERDICTS.add(verdict);
        while (VERDICTS.size() > MAX_MODULES) {
            VERDICTS.remove(0);
        }
        try {
            ModuleVerdictEvents.atVerdict(verdict);
        } catch (Throwable t) {
            // even a class that cannot load (a runtime without jdk.jfr) must not change the verdict
        }
    }

    public static List<String> moduleVerdicts() {
        return List.copyOf(MODULES);
    }

    /** The verdicts kept, oldest first (the chunk-start events, tests). */
    public static List<LoaderVerdict> loaderVerdicts() {
        return List.copyOf(VERDICTS);
    }

    /** Records an alarm (spin, pacing stall, allocation) for status. */
    public static void recordAlarm(String alarm) {
        ALARMS.add(alarm);
        while (ALARMS.size() > MAX_ALARMS) {
            ALARMS.remove(0);
        }
    }

    public static List<String> alarms() {
        return List.copyOf(ALARMS);
    }
}
