package dev.ccagent.it;

import java.nio.file.Files;
import java.nio.file.Path;

/** The machine's load, printed beside every measured figure (a measurement names the load it was taken at). */
public final class LoadAverage {

    private LoadAverage() {
    }

    /** The one-minute load average as Linux reports it ({@code /proc/loadavg}), or "?" where there is none. */
    public static String oneMinute() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
        } catch (Exception e) {
            return "?";
        }
    }
}
