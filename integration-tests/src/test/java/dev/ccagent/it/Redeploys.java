package dev.ccagent.it;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The redeploy tests' runs ({@code KwikRedeployTest}, {@code NettyRedeployTest}): per configuration one forked
 * {@link RedeployMain} that redeploys an application {@code rounds} times in throw-away loaders, and what the JDK
 * says of them (loaders collected, threads still holding one).
 */
public final class Redeploys {

    /** Deployments per run. */
    public static final int ROUNDS = 5;

    static final Pattern COLLECTED = Pattern.compile("(?m)^COLLECTED (\\d+) OF (\\d+)$");

    private Redeploys() {
    }

    /**
     * What each configuration's run gave: loaders collected, stalled downloads retried, what pinned the rest, and the
     * run's standard output.
     */
    public record Outcome(Map<String, Integer> collected, Map<String, Long> retries, String failures,
                          Map<String, String> outputs) {
    }

    /**
     * Runs {@link RedeployMain} once per configuration of {@code runs} (label → agent arguments, null for no
     * agent): {@code app} redeployed {@link #ROUNDS} times over {@code urls}, one download of {@code bytes} in each,
     * every download intact ({@code ROUND n ok BYTES}). The launcher's class path holds {@link RedeployMain} alone.
     */
    public static Outcome run(Path dir, Path agentJar, Class<?> app, List<String> urls, Path keyStore, long bytes,
                              Map<String, String> runs, List<String> jvmArgs) throws Exception {
        int rounds = ROUNDS;
        Path launcher = copyClasses(dir.resolve("launcher"), RedeployMain.class);
        Map<String, Integer> collected = new LinkedHashMap<>();
        Map<String, Long> retries = new LinkedHashMap<>();
        Map<String, String> outputs = new LinkedHashMap<>();
        StringBuilder failures = new StringBuilder();
        int i = 0;
        for (Map.Entry<String, String> run : runs.entrySet()) {
            String name = "redeploy-" + i++;
            ForkedJvm.Builder b = ForkedJvm.builder(name, RedeployMain.class.getName())
                    .classPath(launcher.toString())
                    .dir(dir)
                    .jvmArgs("-Xmx256m", "-XX:+UseSerialGC", "--add-opens", "java.management/sun.management=ALL-UNNAMED",
                            "-Dredeploy.app=" + app.getName(),
                            // written only when a loader survives: the path from a GC root to it
                            "-Dredeploy.heapdump=" + dir.resolve(name + ".hprof"))
                    .jvmArgs(jvmArgs.toArray(new String[0]))
                    .args(Integer.toString(rounds), keyStore.toString(), Long.toString(bytes))
                    .args(urls);
            if (run.getValue() != null) {
                b.javaagent(agentJar, run.getValue());
            }
            try (ForkedJvm jvm = b.start()) {
                int exit = jvm.waitFor(Duration.ofSeconds(400));
                String out = jvm.stdout();
                outputs.put(run.getKey(), out);
                System.out.printf("[it] redeploy %s:%n%s", run.getKey(), out);
                assertEquals(0, exit, run.getKey() + jvm.describe());
                assertEquals(rounds, out.lines().filter(l -> l.matches("ROUND \\d+ ok " + bytes)).count(),
                        run.getKey() + ": every download intact" + jvm.describe());
                // a library's own stalls (kwik's stream-send race where the run has no agent): each stalled attempt
                // is retried on a new connection, counted per run
                retries.put(run.getKey(), out.lines().filter(l -> l.startsWith("RETRY ")).count());
                Matcher m = COLLECTED.matcher(out);
                assertTrue(m.find(), run.getKey() + jvm.describe());
                int n = Integer.parseInt(m.group(1));
                collected.put(run.getKey(), n);
                if (n != rounds) {
                    failures.append(run.getKey()).append(": ").append(n).append(" of ").append(rounds)
                            .append(" loaders collected (").append(retries.get(run.getKey()))
                            .append(" stalled downloads retried) ")
                            .append(out.lines().filter(l -> l.startsWith("PINNED-BY-THREAD") || l.startsWith("SURVIVED")
                                    || l.startsWith("HEAPDUMP") || l.startsWith("GC WAIT") || l.contains("still running")).toList())
                            .append("; ");
                }
            }
        }
        return new Outcome(collected, retries, failures.toString(), outputs);
    }

    /** Copies the class file of {@code type}, and its nested classes', from the test classes to {@code root}. */
    public static Path copyClasses(Path root, Class<?> type) throws IOException {
        Path classes;
        try {
            classes = Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (java.net.URISyntaxException e) {
            throw new IOException(e);
        }
        String pkg = type.getPackageName().replace('.', '/');
        Path from = classes.resolve(pkg);
        Path to = root.resolve(pkg);
        Files.createDirectories(to);
        int copied = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(from, type.getSimpleName() + "{,$*}.class")) {
            for (Path f : files) {
                Files.copy(f, to.resolve(f.getFileName().toString()), StandardCopyOption.REPLACE_EXISTING);
                copied++;
            }
        }
        assertTrue(copied > 0, "no class files of " + type.getName() + " in " + from);
        return root;
    }
}
