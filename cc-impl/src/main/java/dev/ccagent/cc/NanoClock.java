package dev.ccagent.cc;

/** A source of monotonic nanoseconds; the simulator and tests inject their own. */
@FunctionalInterface
public interface NanoClock {

    long nanoTime();

    /** {@link System#nanoTime()}. */
    NanoClock SYSTEM = System::nanoTime;
}
