package dev.ccagent.agent.log;

import java.io.PrintStream;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The agent's own log: one line per message on standard error, prefixed {@code [ccagent]}, so it
 * reads the same in any host's console whatever logging framework the host uses. Never throws.
 */
public final class AgentLog {

    /** Severity, lowest first. */
    public enum Level {
        DEBUG, INFO, WARN, ERROR, OFF;

        /** Parses {@code off|error|warn|info|debug}; null when unknown. */
        public static Level parse(String text) {
            try {
                return Level.valueOf(text.strip().toUpperCase(Locale.ROOT));
            } catch (RuntimeException e) {
                return null;
            }
        }
    }

    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss.SSS");
    private static volatile Level threshold = Level.INFO;
    private static volatile PrintStream out = System.err;
    private static final Set<String> ONCE = ConcurrentHashMap.newKeySet();

    private AgentLog() {
    }

    public static void setLevel(Level level) {
        threshold = level;
    }

    public static Level level() {
        return threshold;
    }

    /** Redirects output (tests). */
    public static void setOutput(PrintStream stream) {
        out = stream;
    }

    public static boolean enabled(Level level) {
        return level != Level.OFF && level.ordinal() >= threshold.ordinal();
    }

    public static void debug(String message) {
        log(Level.DEBUG, message, null);
    }

    public static void info(String message) {
        log(Level.INFO, message, null);
    }

    public static void warn(String message) {
        log(Level.WARN, message, null);
    }

    public static void warn(String message, Throwable cause) {
        log(Level.WARN, message, cause);
    }

    public static void error(String message, Throwable cause) {
        log(Level.ERROR, message, cause);
    }

    /** Logs only the first time {@code key} is seen in this JVM: for problems on hot paths. */
    public static void warnOnce(String key, String message, Throwable cause) {
        try {
            if (ONCE.add(key)) {
                log(Level.WARN, message, cause);
            }
        } catch (Throwable ignored) {
            // out of memory, a broken stream: logging must never take the host down
        }
    }

    private static void log(Level level, String message, Throwable cause) {
        if (!enabled(level)) {
            return;
        }
        try {
            StringBuilder sb = new StringBuilder(96).append(LocalTime.now().format(TIME))
                    .append(" [ccagent] ").append(level).append(' ').append(message);
            if (cause != null) {
                sb.append(": ").append(cause);
            }
            out.println(sb);
            if (cause != null && enabled(Level.DEBUG)) {
                cause.printStackTrace(out);
            }
        } catch (Throwable ignored) {
            // logging must never take the host down (also not an error while logging one)
        }
    }
}
