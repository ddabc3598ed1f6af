package dev.ccagent.it.clock;

/**
 * What {@link ClockStepper} adds to the JVM's wall clock, in nanoseconds. Loaded by the bootstrap loader
 * (the stepper appends a jar holding only this class to its search path), because the advice that reads it
 * is inlined into {@code java.time.Clock}.
 */
public final class WallClockOffset {

    public static volatile long nanos;

    private WallClockOffset() {
    }
}
