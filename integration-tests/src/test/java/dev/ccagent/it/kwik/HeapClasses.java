package dev.ccagent.it.kwik;

import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Which congestion controllers live in another JVM, read by the JDK itself ({@code jcmd PID
 * GC.class_histogram}), not from anything the agent logs or counts: the evidence that a connection's
 * controller is the algorithm we expect (or kwik's own), taken while the connection is alive.
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

    private HeapClasses() {
    }

    /** Live instances per class name in the JVM with this pid (a full GC first, as jcmd does). */
    static Map<String, Long> histogram(long pid) throws IOException, InterruptedException {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        Process p = new ProcessBuilder(jcmd.toString(), Long.toString(pid), "GC.class_histogram")
                .redirectErrorStream(true).start();
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

    /**
     * Polls the histogram of {@code pid} while {@code client} runs (at least once) and returns, per class
     * of {@code classes}, the most instances seen at one time.
     */
    static Map<String, Long> maxWhile(long pid, Process client, List<String> classes)
            throws IOException, InterruptedException {
        Map<String, Long> max = new HashMap<>();
        for (String c : classes) {
            max.put(c, 0L);
        }
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(240);
        do {
            Map<String, Long> h = histogram(pid);
            for (String c : classes) {
                max.merge(c, h.getOrDefault(c, 0L), Math::max);
            }
            if (!client.isAlive()) {
                break;
            }
            Thread.sleep(1000); // each look is a jcmd JVM and a full GC: keep the load low
        } while (System.nanoTime() < until);
        return max;
    }
}
