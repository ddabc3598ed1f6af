package dev.ccagent.it.kwik;

import dev.ccagent.it.Acceptance;
import dev.ccagent.it.ForkedJvm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Redeploys (issue #24): kwik loaded 5 times in a throw-away {@code URLClassLoader} whose parent is
 * the application loader, one download in each, the loader dropped ({@link KwikRedeployMain}). The
 * JDK says how many loaders were collected (cleared weak references after full GCs): all 5 without
 * the agent, and all 5 with it attached for {@code cc=bbr1}, {@code cc=stock}, a canary and a JFR
 * recording on. (kwik's own MemoryMXBean listener is removed by the main, as a container would.)
 */
@Acceptance("loaders collected over 5 redeploys with the agent and 5 without")
class KwikRedeployTest {

    static final int ROUNDS = 5;
    static final Pattern COLLECTED = Pattern.compile("(?m)^COLLECTED (\\d+) OF (\\d+)$");

    @Test
    @Timeout(value = 900, unit = TimeUnit.SECONDS)
    void droppedLoadersAreCollected() throws Exception {
        Path dir = KwikIt.workDir("redeploy");
        Path launcher = copyClasses(dir.resolve("launcher"), "KwikRedeployMain");
        Path app = copyClasses(dir.resolve("webapp"), "KwikRedeployApp");
        List<String> urls = new ArrayList<>();
        urls.add(app.toString());
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        String sep = File.separator;
        for (String e : cp.split(File.pathSeparator)) {
            if (e.contains(sep + "tech" + sep + "kwik" + sep + "kwik" + sep)
                    || e.contains(sep + "tech" + sep + "kwik" + sep + "agent15" + sep)
                    || e.contains(sep + "at" + sep + "favre" + sep) || e.contains(sep + "io" + sep + "whitfin" + sep)) {
                urls.add(e);
            }
        }
        assertTrue(urls.stream().anyMatch(u -> u.contains("kwik-0.10")), "kwik not on the test class path: " + cp);
        Path jfr = dir.resolve("redeploy.jfr");
        Files.deleteIfExists(jfr);
        Map<String, String> runs = new LinkedHashMap<>();
        runs.put("no agent", null);
        runs.put("cc=bbr1", "cc=bbr1;log=warn");
        runs.put("cc=stock", "cc=stock;log=warn");
        runs.put("canary", "cc=stock;canary=bbr1:50%;log=warn");
        runs.put("recording", "cc=bbr1;canary=cubic:50%;log=warn;jfr=" + jfr);
        Map<String, Integer> collected = new LinkedHashMap<>();
        Map<String, Long> retries = new LinkedHashMap<>();
        StringBuilder failures = new StringBuilder();
        int i = 0;
        for (Map.Entry<String, String> run : runs.entrySet()) {
            String name = "redeploy-" + i++;
            ForkedJvm.Builder b = ForkedJvm.builder(name, KwikRedeployMain.class.getName())
                    .classPath(launcher.toString())
                    .dir(dir)
                    .jvmArgs("-Xmx256m", "-XX:+UseSerialGC", "--add-opens", "java.management/sun.management=ALL-UNNAMED",
                            // written only when a loader survives: the path from a GC root to it
                            "-Dredeploy.heapdump=" + dir.resolve(name + ".hprof"))
                    .args(Integer.toString(ROUNDS), KwikIt.keyStore().toString(), "2000000")
                    .args(urls);
            if (run.getValue() != null) {
                b.javaagent(KwikIt.agentJar(), run.getValue());
            }
            try (ForkedJvm jvm = b.start()) {
                int exit = jvm.waitFor(Duration.ofSeconds(400));
                String out = jvm.stdout();
                System.out.printf("[it] redeploy %s:%n%s", run.getKey(), out);
                assertEquals(0, exit, run.getKey() + jvm.describe());
                assertEquals(ROUNDS, out.lines().filter(l -> l.matches("ROUND \\d+ ok 2000000")).count(),
                        run.getKey() + ": every download intact" + jvm.describe());
                // kwik's stream-send race where the run has no agent (the agent closes it by default): each
                // stalled attempt is retried on a new connection, counted per run
                retries.put(run.getKey(), out.lines().filter(l -> l.equals("RETRY stalled download")).count());
                Matcher m = COLLECTED.matcher(out);
                assertTrue(m.find(), run.getKey() + jvm.describe());
                int n = Integer.parseInt(m.group(1));
                collected.put(run.getKey(), n);
                if (n != ROUNDS) {
                    failures.append(run.getKey()).append(": ").append(n).append(" of ").append(ROUNDS)
                            .append(" loaders collected (").append(retries.get(run.getKey()))
                            .append(" stalled downloads retried) ")
                            .append(out.lines().filter(l -> l.startsWith("PINNED-BY-THREAD") || l.startsWith("SURVIVED")
                                    || l.startsWith("HEAPDUMP") || l.startsWith("GC WAIT") || l.contains("still running")).toList())
                            .append("; ");
                }
            }
        }
        System.out.println("[it] redeploy: loaders collected per run " + collected
                + "; stalled downloads retried per run " + retries);
        assertTrue(failures.length() == 0, failures.toString());
        assertTrue(Files.size(jfr) > 0, "the recording was written");
    }

    /** Copies the class file of {@code simpleName} in this package, and its nested classes, to {@code root}. */
    private static Path copyClasses(Path root, String simpleName) throws IOException {
        Path from;
        try {
            from = Path.of(KwikRedeployTest.class.getProtectionDomain().getCodeSource().getLocation().toURI())
                    .resolve("dev/ccagent/it/kwik");
        } catch (java.net.URISyntaxException e) {
            throw new IOException(e);
        }
        Path to = root.resolve("dev/ccagent/it/kwik");
        Files.createDirectories(to);
        int copied = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(from, simpleName + "{,$*}.class")) {
            for (Path f : files) {
                Files.copy(f, to.resolve(f.getFileName().toString()), StandardCopyOption.REPLACE_EXISTING);
                copied++;
            }
        }
        assertTrue(copied > 0, "no class files of " + simpleName + " in " + from);
        return root;
    }
}
