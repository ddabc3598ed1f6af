package dev.ccagent.agent.runtime;

import dev.ccagent.agent.log.AgentLog;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Fallbacks (our code failed, the connection went on without that part of the agent) counted per
 * cause — where it failed and the exception's class — and told: the first of a cause at once, with
 * its consequence and exception, then one summary line per cause per period (a minute; the count
 * since the cause's last line) for as long as that cause keeps occurring. The summary thread
 * ({@code ccagent-fallbacks}) runs only while there is something to summarise: it stops after a period
 * with nothing to report, and at detach ({@link #stop}, which first writes what is pending).
 *
 * <p>Each line has its JFR event ({@code dev.ccagent.Fallback}, kind {@code first} or {@code summary}, with the
 * count and the total), when a recording runs. Lines (docs/netty.md, "Fallbacks"):
 * <pre>
 * WARN fallback: WHERE failed; CONSEQUENCE (first of this cause; repeats are summarised every 60 s): EXCEPTION
 * WARN fallback summary: N more of WHERE (EXCEPTION-CLASS) in the last 60 s; this cause: TOTAL since start
 * </pre>
 */
public final class FallbackLog {

    /** The summary period: a minute; {@code -Dccagent.test.fallback-summary-ms=N} shortens it for tests. */
    static final long PERIOD_MILLIS = Math.max(100, Long.getLong("ccagent.test.fallback-summary-ms", 60_000L));
    /** Causes kept apart; beyond this they are counted under one "other causes" entry. */
    static final int MAX_CAUSES = 64;

    /** One cause: where, and the exception's class. */
    static final class Cause {
        final String where;
        final String exception;
        volatile String consequence;
        final AtomicLong total = new AtomicLong();
        final AtomicLong sinceLine = new AtomicLong();

        Cause(String where, String exception) {
            this.where = where;
            this.exception = exception;
        }
    }

    private static final Map<String, Cause> CAUSES = new ConcurrentHashMap<>();
    private static AgentScheduler ticker;

    private FallbackLog() {
    }

    /** Counts one fallback of {@code where}; logs it if it is the first of its cause. Never throws. */
    static void record(String where, String consequence, Throwable cause) {
        try {
            String exception = cause != null ? cause.getClass().getName() : "no exception";
            String key = where + " (" + exception + ")";
            Cause c = CAUSES.get(key);
            if (c == null) {
                if (CAUSES.size() >= MAX_CAUSES) {
                    key = "other causes";
                    c = CAUSES.computeIfAbsent(key, k -> new Cause("other causes", "various"));
                } else {
                    c = CAUSES.computeIfAbsent(key, k -> new Cause(where, exception));
                }
            }
            c.consequence = consequence;
            long total = c.total.incrementAndGet();
            if (total == 1) {
                AgentLog.warn("fallback: " + where + " failed; " + consequence + " (first of this cause; repeats are"
                        + " summarised every " + period() + ")", cause);
                event("first", c, 1, total);
            } else {
                c.sinceLine.incrementAndGet();
                ensureTicker();
            }
        } catch (Throwable ignored) {
            // counting must never take the host down
        }
    }

    private static synchronized void ensureTicker() {
        if (ticker == null) {
            // often started from a library's thread: created so that it pins none of its loaders
            ticker = new AgentScheduler("ccagent-fallbacks"); // not a JDK executor (see AgentScheduler)
            ticker.withFixedDelay(FallbackLog::tickAndStopWhenIdle, TimeUnit.MILLISECONDS.toNanos(PERIOD_MILLIS),
                    TimeUnit.MILLISECONDS.toNanos(PERIOD_MILLIS));
        }
    }

    private static void tickAndStopWhenIdle() {
        try {
            if (summarise() == 0) {
                synchronized (FallbackLog.class) {
                    // a fallback counted after summarise() restarts nothing here: check again under the lock
                    if (pending() == 0 && ticker != null) {
                        ticker.shutdown(); // on its own thread: stops after this run
                        ticker = null;
                    }
                }
            }
        } catch (Throwable ignored) {
            // the ticker must survive anything
        }
    }

    /** The log line's JFR twin (dev.ccagent.Fallback), when a recording runs. Never throws. */
    private static void event(String kind, Cause c, long count, long total) {
        if (!dev.ccagent.jfr.JfrSwitch.on) {
            return;
        }
        try {
            dev.ccagent.jfr.Fallback e = new dev.ccagent.jfr.Fallback();
            if (e.shouldCommit()) {
                e.kind = kind;
                e.where = c.where;
                e.exception = c.exception;
                e.consequence = c.consequence;
                e.count = count;
                e.total = total;
                e.commit();
            }
        } catch (Throwable ignored) {
            // an event must never take the host down
        }
    }

    /** Writes one summary line per cause with fallbacks since its last line; returns how many lines. */
    static int summarise() {
        int lines = 0;
        for (Cause c : CAUSES.values()) {
            long n = c.sinceLine.getAndSet(0);
            if (n > 0) {
                lines++;
                // not "WHERE failed": the first line of a cause stays the only one that reads so
                long total = c.total.get();
                AgentLog.warn("fallback summary: " + n + " more of " + c.where + " (" + c.exception + ") in the last "
                        + period() + "; this cause: " + total + " since start");
                event("summary", c, n, total);
            }
        }
        return lines;
    }

    private static long pending() {
        long n = 0;
        for (Cause c : CAUSES.values()) {
            n += c.sinceLine.get();
        }
        return n;
    }

    /** At detach (and in tests): writes what is pending and stops the summary thread. */
    public static void stop() {
        AgentScheduler t;
        synchronized (FallbackLog.class) {
            t = ticker;
            ticker = null;
        }
        if (t != null) {
            t.shutdown();
        }
        summarise();
    }

    /** Whether the summary thread runs (tests). */
    static synchronized boolean tickerRunning() {
        return ticker != null;
    }

    /** One line per cause for status: "WHERE (EXCEPTION): TOTAL; CONSEQUENCE", most frequent first. */
    public static List<String> causes() {
        List<Cause> all = new ArrayList<>(CAUSES.values());
        all.sort((a, b) -> Long.compare(b.total.get(), a.total.get()));
        List<String> out = new ArrayList<>(all.size());
        for (Cause c : all) {
            out.add(c.where + " (" + c.exception + "): " + c.total.get() + "; " + c.consequence);
        }
        return out;
    }

    /** Forgets every cause (tests). */
    static void reset() {
        stop();
        CAUSES.clear();
    }

    static String period() {
        return PERIOD_MILLIS % 1000 == 0 ? PERIOD_MILLIS / 1000 + " s"
                : String.format(Locale.ROOT, "%.1f s", PERIOD_MILLIS / 1000.0);
    }
}
