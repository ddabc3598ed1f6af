package dev.ccagent.cc;

import java.util.Locale;

/**
 * Parsing of human-written quantities: durations ({@code 50ms}, {@code 1.5s}, {@code 200us}),
 * sizes ({@code 1200}, {@code 64KiB}, {@code 10MB}) and rates ({@code 50mbit}, {@code 2.5Gbit},
 * {@code 1MB/s}). Errors are {@link CcConfigException}s that quote the input.
 */
public final class Units {

    private Units() {
    }

    /** Parses a duration into nanoseconds. A bare number is taken as milliseconds. */
    public static long parseDurationNanos(String text) {
        String s = normalise(text, "duration");
        double factor;
        String number;
        if (s.endsWith("ns")) {
            factor = 1;
            number = cut(s, 2);
        } else if (s.endsWith("us") || s.endsWith("µs")) {
            factor = 1e3;
            number = cut(s, 2);
        } else if (s.endsWith("ms")) {
            factor = 1e6;
            number = cut(s, 2);
        } else if (s.endsWith("min")) {
            factor = 60e9;
            number = cut(s, 3);
        } else if (s.endsWith("s")) {
            factor = 1e9;
            number = cut(s, 1);
        } else {
            factor = 1e6;
            number = s;
        }
        double value = parseNonNegative(number, text, "duration");
        return Math.round(value * factor);
    }

    /** Parses a byte count: plain bytes, or with B, KB/MB/GB (10^3) or KiB/MiB/GiB (2^10). */
    public static long parseBytes(String text) {
        String s = normalise(text, "size");
        String lower = s.toLowerCase(Locale.ROOT);
        double factor = 1;
        String number = s;
        String[][] units = {{"gib", "1073741824"}, {"mib", "1048576"}, {"kib", "1024"},
            {"gb", "1e9"}, {"mb", "1e6"}, {"kb", "1e3"}, {"b", "1"}};
        for (String[] unit : units) {
            if (lower.endsWith(unit[0])) {
                factor = Double.parseDouble(unit[1]);
                number = cut(s, unit[0].length());
                break;
            }
        }
        double value = parseNonNegative(number, text, "size");
        return Math.round(value * factor);
    }

    /**
     * Parses a rate into bits per second. Bits: {@code bit}, {@code kbit}, {@code mbit}, {@code gbit}
     * or {@code bps}, {@code kbps}, {@code mbps}, {@code gbps} (any case). Bytes: {@code B/s},
     * {@code KB/s}, {@code MB/s}, {@code GB/s} (capital B). A bare number is bits per second.
     */
    public static long parseRateBitsPerSecond(String text) {
        String s = normalise(text, "rate");
        double bitsPerUnit = 1;
        String rest = s;
        if (s.endsWith("B/s")) {
            bitsPerUnit = 8;
            rest = cut(s, 3);
        } else {
            String lower = s.toLowerCase(Locale.ROOT);
            for (String suffix : new String[] {"bit", "bps", "b/s"}) {
                if (lower.endsWith(suffix)) {
                    rest = cut(s, suffix.length());
                    break;
                }
            }
        }
        double prefix = 1;
        if (!rest.isEmpty()) {
            switch (Character.toLowerCase(rest.charAt(rest.length() - 1))) {
                case 'k': prefix = 1e3; break;
                case 'm': prefix = 1e6; break;
                case 'g': prefix = 1e9; break;
                default: break;
            }
            if (prefix != 1) {
                rest = cut(rest, 1);
            }
        }
        double value = parseNonNegative(rest, text, "rate");
        return Math.round(value * prefix * bitsPerUnit);
    }

    /** Formats nanoseconds compactly, e.g. {@code 1.5ms}. */
    public static String formatNanos(long nanos) {
        if (nanos >= 1_000_000_000L) {
            return trim(nanos / 1e9) + "s";
        }
        if (nanos >= 1_000_000L) {
            return trim(nanos / 1e6) + "ms";
        }
        if (nanos >= 1_000L) {
            return trim(nanos / 1e3) + "us";
        }
        return nanos + "ns";
    }

    /** Formats bits per second compactly, e.g. {@code 20.0 Mbit/s}. */
    public static String formatBitRate(double bitsPerSecond) {
        if (bitsPerSecond >= 1e9) {
            return String.format(Locale.ROOT, "%.2f Gbit/s", bitsPerSecond / 1e9);
        }
        if (bitsPerSecond >= 1e6) {
            return String.format(Locale.ROOT, "%.2f Mbit/s", bitsPerSecond / 1e6);
        }
        return String.format(Locale.ROOT, "%.1f kbit/s", bitsPerSecond / 1e3);
    }

    private static String trim(double v) {
        String s = String.format(Locale.ROOT, "%.3f", v);
        s = s.replaceAll("0+$", "");
        return s.endsWith(".") ? s.substring(0, s.length() - 1) : s;
    }

    private static String normalise(String text, String what) {
        if (text == null || text.isBlank()) {
            throw new CcConfigException("empty " + what);
        }
        return text.strip().replace("_", "");
    }

    private static String cut(String s, int suffix) {
        return s.substring(0, s.length() - suffix).strip();
    }

    private static double parseNonNegative(String number, String original, String what) {
        double value;
        try {
            value = Double.parseDouble(number);
        } catch (NumberFormatException e) {
            throw new CcConfigException("not a " + what + ": '" + original + "'");
        }
        if (!(value >= 0) || Double.isInfinite(value)) {
            throw new CcConfigException("not a " + what + ": '" + original + "' (must be a finite value >= 0)");
        }
        return value;
    }
}
