package dev.ccagent.it;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;

/**
 * Finds an installed JDK of a given feature release, for tests that run the agent's target JVM on
 * another Java than the build's: the {@code JAVA<N>_HOME} environment variable (or system property
 * {@code java<N>.home}) when set, else a scan of {@code /usr/lib/jvm} (and {@code /opt/java},
 * {@code ~/.sdkman/candidates/java}) for a directory whose {@code release} file says
 * {@code JAVA_VERSION="N..."} and that has {@code bin/java}. No path is hard-coded beyond those
 * conventional roots; a test that finds none should print a visible skip.
 */
public final class Jdks {

    private Jdks() {
    }

    /** A JDK of feature release {@code feature} (e.g. 25), its home directory. */
    public static Optional<Path> find(int feature) {
        for (String configured : new String[] {System.getenv("JAVA" + feature + "_HOME"),
                System.getProperty("java" + feature + ".home")}) {
            if (configured != null && !configured.isBlank()) {
                Path home = Path.of(configured);
                if (feature(home) == feature) {
                    return Optional.of(home);
                }
            }
        }
        for (Path root : roots()) {
            if (!Files.isDirectory(root)) {
                continue;
            }
            List<Path> candidates = new ArrayList<>();
            try (DirectoryStream<Path> dirs = Files.newDirectoryStream(root)) {
                for (Path d : dirs) {
                    candidates.add(d);
                }
            } catch (IOException e) {
                continue;
            }
            candidates.sort(null); // deterministic choice
            for (Path d : candidates) {
                if (!Files.isSymbolicLink(d) && feature(d) == feature) {
                    return Optional.of(d);
                }
            }
        }
        return Optional.empty();
    }

    /** The {@code java} launcher of a JDK home. */
    public static Path java(Path home) {
        return home.resolve("bin").resolve("java");
    }

    /** The feature release a JDK home's {@code release} file names; -1 when it is not a usable JDK. */
    public static int feature(Path home) {
        Path release = home.resolve("release");
        if (!Files.isRegularFile(release) || !Files.isExecutable(java(home))) {
            return -1;
        }
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(release)) {
            p.load(in);
        } catch (IOException | IllegalArgumentException e) {
            return -1;
        }
        String v = p.getProperty("JAVA_VERSION");
        if (v == null) {
            return -1;
        }
        v = v.replace("\"", "").trim();
        if (v.startsWith("1.")) {
            v = v.substring(2); // 1.8.0_x
        }
        int end = 0;
        while (end < v.length() && Character.isDigit(v.charAt(end))) {
            end++;
        }
        try {
            return end == 0 ? -1 : Integer.parseInt(v.substring(0, end));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static List<Path> roots() {
        List<Path> roots = new ArrayList<>();
        roots.add(Path.of("/usr/lib/jvm"));
        roots.add(Path.of("/opt/java"));
        String home = System.getProperty("user.home");
        if (home != null) {
            roots.add(Path.of(home, ".sdkman", "candidates", "java"));
        }
        return roots;
    }
}
