package dev.ccagent.sim;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/** One flow of a simulation: its algorithm, options, start time and how much it sends. */
public final class FlowConfig {

    final String algorithm;
    final Map<String, String> options;
    final long startNanos;
    /** Bytes to deliver; {@link Long#MAX_VALUE}: send until the simulation's duration ends. */
    final long bytes;
    /** Application-limited writes: {@code writeBytes} become available every {@code writePeriodNanos}. */
    final long writeBytes;
    final long writePeriodNanos;

    private FlowConfig(String algorithm, Map<String, String> options, long startNanos, long bytes,
                       long writeBytes, long writePeriodNanos) {
        this.algorithm = algorithm;
        this.options = Collections.unmodifiableMap(new LinkedHashMap<>(options));
        this.startNanos = startNanos;
        this.bytes = bytes;
        this.writeBytes = writeBytes;
        this.writePeriodNanos = writePeriodNanos;
    }

    /** A bulk flow of {@code algorithm} with default options, starting at 0, sending until the end. */
    public static FlowConfig of(String algorithm) {
        return new FlowConfig(algorithm, Map.of(), 0, Long.MAX_VALUE, 0, 0);
    }

    public FlowConfig options(Map<String, String> options) {
        return new FlowConfig(algorithm, options, startNanos, bytes, writeBytes, writePeriodNanos);
    }

    public FlowConfig startNanos(long startNanos) {
        if (startNanos < 0) {
            throw new IllegalArgumentException("start must be >= 0");
        }
        return new FlowConfig(algorithm, options, startNanos, bytes, writeBytes, writePeriodNanos);
    }

    /** Deliver exactly this many bytes, then stop. */
    public FlowConfig bytes(long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("bytes must be > 0");
        }
        return new FlowConfig(algorithm, options, startNanos, bytes, writeBytes, writePeriodNanos);
    }

    /**
     * Application-limited sending: the application writes {@code writeBytes} every
     * {@code periodNanos} (the first write at the flow's start), instead of having all data at once.
     */
    public FlowConfig appWrites(long writeBytes, long periodNanos) {
        if (writeBytes <= 0 || periodNanos <= 0) {
            throw new IllegalArgumentException("write size and period must be > 0");
        }
        return new FlowConfig(algorithm, options, startNanos, bytes, writeBytes, periodNanos);
    }

    public String algorithm() {
        return algorithm;
    }

    public Map<String, String> options() {
        return options;
    }

    public long startNanos() {
        return startNanos;
    }

    public long bytes() {
        return bytes;
    }
}
