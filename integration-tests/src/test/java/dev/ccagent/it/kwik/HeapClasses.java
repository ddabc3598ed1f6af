package dev.ccagent.it.kwik;

import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Which congestion controllers a connection got in another JVM, read by the JDK itself ({@code jcmd PID
 * GC.class_histogram}), not from anything the agent logs or counts.
 *
 * <p>{@link #createdDuring}: a histogram of live objects first (jcmd runs a full GC, so no controller
 * of an earlier, closed connection is left), then the action (a download), then a histogram of all
 * objects without a GC ({@code -all}): what the action's connection created is in it even after the
 * connection closed. A GC inside the action could only hide an instance (the test fails), never invent one.
 */
final class HeapClasses {

    /** Our algorithm classes by name, spelled out here so that an algorithm dropped from the jar fails the tests. */
    static final Map<String, String> ALGORITHM_CLASSES = Map.of(
            "newreno", "dev.ccagent.cc.reno.NewReno",
            "cubic", "dev.ccagent.cc.cubic.Cubic",
            "reno-hbdp", "dev.ccagent.cc.reno.HighBdpReno",
            "bbr1", "dev.ccagent.cc.bbr.Bbr1",
            "bbr3", "dev.ccagent.cc.bbr.Bbr3");

    /** kwik's own controller class (0.10.x). */
    static final String KWIK_NEW_RENO = "tech.kwik.core.cc.NewRenoCongestionController";

    private static final Pattern ROW = Pattern.compile("^\\s*\\d+:\\s+(\\d+)\\s+\\d+\\s+(\\S+)");

    /** Something to run between the two histograms. */
    interface Action<T> {
        T run() throws Exception;
    }

    /** The action's result and the instances per class that appeared while it ran. */
    record During<T>(T result, Map<String, Long> created) {
        long count(String className) {
            return created.getOrDefault(className, 0L);
        }

        /** Our algorithm names with at least one instance created. */
        java.util.Set<String> algorithms() {
            java.util.Set<String> s = new java.util.TreeSet<>();
            ALGORITHM_CLASSES.forEach((name, cls) -> {
                if (count(cls) > 0) {
                    s.add(name);
                }
            });
            return s;
        }
    }

    private HeapClasses() {
    }

    static <T> During<T> createdDuring(long pid, Action<T> action) throws Exception {
        Map<String, Long> before = histogram(pid, false);
        T result = action.run();
        Map<String, Long> after = histogram(pid, true);
        Map<String, Long> created = new HashMap<>();
        after.forEach((cls, n) -> {
            long d = n - before.getOrDefault(cls, 0L);
            if (d > 0) {
                created.put(cls, d);
            }
        });
        return new During<>(result, created);
    }

    /** Instances per class name in the JVM with this pid: live ones after a full GC, or ({@code all}) every one, no GC. */
    static Map<String, Long> histogram(long pid, boolean all) throws IOException, InterruptedException {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        ProcessBuilder pb = all
                ? new ProcessBuilder(jcmd.toString(), Long.toString(pid), "GC.class_histogram", "-all")
                : new ProcessBuilder(jcmd.toString(), Long.toString(pid), "GC.class_histogram");
        Process p = pb.redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IOException("jcmd " + pid + " GC.class_histogram failed: " + out);
        }
        Map<String, Long> counts = new HashMap<>();
        for (String line : out.split("\n")) {
            Matcher m = ROW.matcher(line);
            if (m.find()) {
                counts.merge(m.group(2), Long.parseLong(m.group(1)), Long::sum);
            }
        }
        return counts;
    }
}
