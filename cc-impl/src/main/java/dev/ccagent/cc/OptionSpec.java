package dev.ccagent.cc;

import java.util.Locale;

/**
 * One typed option an algorithm accepts: its key, kind, allowed range, default and meaning.
 * Values are parsed once, at configuration time, never on a hot path.
 */
public final class OptionSpec {

    /** How the option's text is read. */
    public enum Kind {
        /** A whole number. */
        INTEGER,
        /** A decimal number. */
        DECIMAL,
        /** on/off, true/false, yes/no. */
        BOOLEAN,
        /** A duration, stored as nanoseconds ({@link Units#parseDurationNanos}). */
        DURATION,
        /** A size, stored as bytes ({@link Units#parseBytes}). */
        BYTES
    }

    private final String key;
    private final Kind kind;
    private final double min;
    private final double max;
    private final boolean minExclusive;
    private final String defaultText;
    private final String description;

    private OptionSpec(String key, Kind kind, double min, boolean minExclusive, double max,
                       String defaultText, String description) {
        this.key = key;
        this.kind = kind;
        this.min = min;
        this.minExclusive = minExclusive;
        this.max = max;
        this.defaultText = defaultText;
        this.description = description;
    }

    public static OptionSpec integer(String key, long min, long max, String defaultText, String description) {
        return new OptionSpec(key, Kind.INTEGER, min, false, max, defaultText, description);
    }

    /** A decimal in {@code (min, max]} when {@code minExclusive}, else {@code [min, max]}. */
    public static OptionSpec decimal(String key, double min, boolean minExclusive, double max,
                                     String defaultText, String description) {
        return new OptionSpec(key, Kind.DECIMAL, min, minExclusive, max, defaultText, description);
    }

    public static OptionSpec bool(String key, String defaultText, String description) {
        return new OptionSpec(key, Kind.BOOLEAN, 0, false, 1, defaultText, description);
    }

    public static OptionSpec duration(String key, long minNanos, long maxNanos, String defaultText,
                                      String description) {
        return new OptionSpec(key, Kind.DURATION, minNanos, false, maxNanos, defaultText, description);
    }

    public static OptionSpec bytes(String key, long min, long max, String defaultText, String description) {
        return new OptionSpec(key, Kind.BYTES, min, false, max, defaultText, description);
    }

    public String key() {
        return key;
    }

    public Kind kind() {
        return kind;
    }

    /** The default as text, or null when the algorithm derives it (e.g. from the MSS). */
    public String defaultText() {
        return defaultText;
    }

    public String description() {
        return description;
    }

    /**
     * Parses and range-checks a value: a {@link Long} for INTEGER, DURATION and BYTES, a
     * {@link Double} for DECIMAL, a {@link Boolean} for BOOLEAN.
     *
     * @throws CcConfigException naming the option, the bad text and what is accepted
     */
    public Object parse(String text) {
        String t = text == null ? "" : text.strip();
        Object value;
        double numeric;
        try {
            switch (kind) {
                case BOOLEAN:
                    return parseBoolean(t);
                case DECIMAL:
                    double d = Double.parseDouble(t);
                    if (Double.isNaN(d) || Double.isInfinite(d)) {
                        throw new NumberFormatException();
                    }
                    value = d;
                    numeric = d;
                    break;
                default:
                    long whole = parseWhole(t);
                    value = whole;
                    numeric = whole;
                    break;
            }
        } catch (NumberFormatException | CcConfigException e) {
            throw new CcConfigException("option " + key + ": '" + t + "' is not " + expected());
        }
        boolean low = minExclusive ? numeric <= min : numeric < min;
        if (low || numeric > max) {
            throw new CcConfigException("option " + key + ": " + t + " is out of range, expected " + expected());
        }
        return value;
    }

    /** The value of an INTEGER, DURATION or BYTES option (nanoseconds, bytes). */
    private long parseWhole(String t) {
        switch (kind) {
            case INTEGER:
                return Long.parseLong(t);
            case DURATION:
                return Units.parseDurationNanos(t);
            case BYTES:
                return Units.parseBytes(t);
            default:
                throw new IllegalStateException(kind.toString());
        }
    }

    private Boolean parseBoolean(String t) {
        switch (t.toLowerCase(Locale.ROOT)) {
            case "on": case "true": case "yes": case "1":
                return Boolean.TRUE;
            case "off": case "false": case "no": case "0":
                return Boolean.FALSE;
            default:
                throw new CcConfigException("option " + key + ": '" + t + "' is not on/off");
        }
    }

    /** What the option accepts, for error messages and help. */
    public String expected() {
        switch (kind) {
            case BOOLEAN:
                return "on/off";
            case INTEGER:
                return "a whole number in [" + (long) min + ", " + (long) max + "]";
            case DECIMAL:
                return "a number in " + (minExclusive ? "(" : "[") + fmt(min) + ", " + fmt(max) + "]";
            case DURATION:
                return "a duration in [" + Units.formatNanos((long) min) + ", " + Units.formatNanos((long) max)
                        + "] such as 25ms";
            case BYTES:
                return "a size in [" + (long) min + ", " + (long) max + "] bytes such as 1200 or 64KiB";
            default:
                return kind.toString();
        }
    }

    private static String fmt(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
    }
}
