package dev.ccagent.agent.config;

import dev.ccagent.cc.CcConfigException;
import dev.ccagent.cc.Units;

/**
 * A configuration value that must lie in a range (both ends included); one outside it is refused
 * with the range in words, e.g. "between 1s and 1h".
 */
final class InRange {

    private InRange() {
    }

    /** A duration ({@code 500ms}, {@code 10s}, ...) in nanoseconds. */
    static long durationNanos(String value, long minNanos, long maxNanos, String range) {
        return check(Units.parseDurationNanos(value), minNanos, maxNanos, range);
    }

    /** A size ({@code 64KiB}, {@code 1MiB}, ...) in bytes. */
    static long bytes(String value, long min, long max, String range) {
        return check(Units.parseBytes(value), min, max, range);
    }

    /**
     * A whole number from {@code min} to {@code max} of {@code unit} (Netty's settings, {@code jfr.state-connections});
     * else refused as "'x' is not a whole number of UNIT" or "expected MIN to MAX UNIT".
     */
    static long wholeNumber(String value, long min, long max, String unit) {
        long n;
        try {
            n = Long.parseLong(value.strip());
        } catch (NumberFormatException e) {
            throw new CcConfigException("'" + value.strip() + "' is not a whole number of " + unit);
        }
        return check(n, min, max, "expected " + min + " to " + max + " " + unit);
    }

    private static long check(long v, long min, long max, String range) {
        if (v < min || v > max) {
            throw new CcConfigException(range);
        }
        return v;
    }
}
