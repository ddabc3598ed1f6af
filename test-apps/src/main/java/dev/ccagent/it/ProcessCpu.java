package dev.ccagent.it;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * A process's CPU time read from Linux's {@code /proc}, for benchmarks that measure a server from outside
 * (or from inside, with its own pid). Times are in nanoseconds, in steps of one clock tick (10 ms:
 * USER_HZ is 100 on Linux); -1 where {@code /proc} cannot be read.
 */
public final class ProcessCpu {

    private static final long NANOS_PER_TICK = 10_000_000L;

    private ProcessCpu() {
    }

    /** {@code utime + stime} of the whole process {@code pid}, all threads, living and ended. */
    public static long totalNanos(long pid) {
        try {
            long[] t = userAndSystemTicks(Files.readString(Path.of("/proc", Long.toString(pid), "stat"),
                    StandardCharsets.US_ASCII));
            return (t[0] + t[1]) * NANOS_PER_TICK;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /**
     * CPU time of the JVM {@code pid}'s JIT compiler threads so far ({@code utime + stime} of every
     * {@code /proc/PID/task/*} named "C1/C2 CompilerThre..."). Part of {@link #totalNanos}, and the part that
     * still varies from one download to the next long after a warm-up. (The JVM's own {@code CompilationMXBean}
     * time is elapsed time, not CPU: it exceeded the process's CPU time on this machine.) A compiler thread that
     * exits meanwhile takes its time with it, so the figure can only be too small.
     */
    public static long jitNanos(long pid) {
        Path tasks = Path.of("/proc", Long.toString(pid), "task");
        if (!Files.isDirectory(tasks)) {
            return -1;
        }
        long ticks = 0;
        try (Stream<Path> all = Files.list(tasks)) {
            for (Path task : (Iterable<Path>) all::iterator) {
                String stat;
                try {
                    stat = Files.readString(task.resolve("stat"), StandardCharsets.US_ASCII);
                } catch (IOException gone) {
                    continue; // the thread ended meanwhile
                }
                String comm = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
                if (comm.startsWith("C1 Compi") || comm.startsWith("C2 Compi")) {
                    long[] t = userAndSystemTicks(stat);
                    ticks += t[0] + t[1];
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return ticks * NANOS_PER_TICK;
    }

    /** Fields 14 and 15 of a {@code stat} line (after "pid (comm) ", the state is field 3). */
    private static long[] userAndSystemTicks(String stat) {
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return new long[] {Long.parseLong(f[11]), Long.parseLong(f[12])};
    }
}
