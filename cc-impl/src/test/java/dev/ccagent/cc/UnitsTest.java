package dev.ccagent.cc;

import org.junit.jupiter.api.Test;

import static dev.ccagent.cc.ConfigErrors.assertRejected;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class UnitsTest {

    @Test
    void durations() {
        assertEquals(50_000_000L, Units.parseDurationNanos("50ms"));
        assertEquals(1_500_000_000L, Units.parseDurationNanos("1.5s"));
        assertEquals(200_000L, Units.parseDurationNanos("200us"));
        assertEquals(7L, Units.parseDurationNanos("7ns"));
        assertEquals(25_000_000L, Units.parseDurationNanos("25"), "bare number is milliseconds");
        assertEquals(120_000_000_000L, Units.parseDurationNanos("2min"));
    }

    @Test
    void sizes() {
        assertEquals(1200, Units.parseBytes("1200"));
        assertEquals(65_536, Units.parseBytes("64KiB"));
        assertEquals(50L << 20, Units.parseBytes("50MiB"));
        assertEquals(10_000_000, Units.parseBytes("10MB"));
        assertEquals(1200, Units.parseBytes("1200B"));
    }

    @Test
    void rates() {
        assertEquals(50_000_000, Units.parseRateBitsPerSecond("50mbit"));
        assertEquals(2_500_000_000L, Units.parseRateBitsPerSecond("2.5Gbit"));
        assertEquals(8_000_000, Units.parseRateBitsPerSecond("1MB/s"));
        assertEquals(1_000_000, Units.parseRateBitsPerSecond("1mbps"));
        assertEquals(1_000_000, Units.parseRateBitsPerSecond("1Mb/s"), "lower-case b is bits");
        assertEquals(9600, Units.parseRateBitsPerSecond("9600"));
    }

    @Test
    void errorsQuoteTheInput() {
        assertRejected(() -> Units.parseDurationNanos("fastms"), "'fastms'");
        assertThrows(CcConfigException.class, () -> Units.parseBytes("-5"));
        assertThrows(CcConfigException.class, () -> Units.parseRateBitsPerSecond(""));
        assertThrows(CcConfigException.class, () -> Units.parseRateBitsPerSecond("NaNmbit"));
    }
}
