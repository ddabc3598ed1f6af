package dev.ccagent.it;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * The build tree around {@code agent/target/ccagent.jar}: this module's classes and its run-time
 * class path file ({@code integration-tests/target/classpath.txt}, written by the build). Used by
 * the demo ({@code integration-tests/target/ccagent-demo.jar}) and the benchmarks, which run outside Maven.
 */
public final class BuildTree {

    public static final String HINT = "run mvn -B -q package -DskipTests in the repository first";

    private final Path root;
    private final Path agentJar;
    private final Path itClasses;
    private final String runtimeClassPath;

    private BuildTree(Path root, Path agentJar, Path itClasses, String runtimeClassPath) {
        this.root = root;
        this.agentJar = agentJar;
        this.itClasses = itClasses;
        this.runtimeClassPath = runtimeClassPath;
    }

    /** The tree of {@code agentJar} (…/agent/target/ccagent.jar); throws with {@link #HINT} when incomplete. */
    public static BuildTree of(Path agentJar) throws IOException {
        Path jar = agentJar.toAbsolutePath().normalize();
        if (!Files.isRegularFile(jar)) {
            throw new IOException("no agent jar at " + jar + ": " + HINT);
        }
        Path root = jar.getParent() != null && jar.getParent().getParent() != null
                ? jar.getParent().getParent().getParent() : null;
        if (root == null) {
            throw new IOException(jar + " is not inside a build tree (expected agent/target/ccagent.jar): " + HINT);
        }
        Path classes = root.resolve("integration-tests/target/classes");
        Path cpFile = root.resolve("integration-tests/target/classpath.txt");
        if (!Files.isDirectory(classes.resolve("dev/ccagent/it/kwik")) || !Files.isRegularFile(cpFile)) {
            throw new IOException("the build tree next to " + jar + " has no " + root.relativize(classes) + " or "
                    + root.relativize(cpFile) + ": " + HINT);
        }
        String cp = Files.readString(cpFile).strip();
        for (String e : cp.split(File.pathSeparator)) {
            if (!e.isEmpty() && !Files.exists(Path.of(e))) {
                throw new IOException("class path entry " + e + " (from " + cpFile + ") is missing: " + HINT);
            }
        }
        return new BuildTree(root, jar, classes, cp);
    }

    /** The tree from the system property {@code ccagent.jar}, else the working directory's. */
    public static BuildTree locate() throws IOException {
        String p = System.getProperty("ccagent.jar");
        return of(p != null ? Path.of(p) : Path.of("agent/target/ccagent.jar"));
    }

    public Path root() {
        return root;
    }

    public Path agentJar() {
        return agentJar;
    }

    /** This module's classes plus its run-time dependencies (kwik, cc-impl, Byte Buddy, JFreeChart). */
    public String fullClassPath() {
        return itClasses + (runtimeClassPath.isEmpty() ? "" : File.pathSeparator + runtimeClassPath);
    }

    /**
     * The class path of forked kwik servers and clients: this module's classes and kwik with its
     * dependencies only — never the agent, cc-impl or Byte Buddy (they come with -javaagent, as in
     * production).
     */
    public String kwikAppClassPath() {
        String sep = File.separator;
        return itClasses + File.pathSeparator + ForkedJvm.filterClassPath(runtimeClassPath,
                e -> e.contains(sep + "tech" + sep + "kwik" + sep) || e.contains(sep + "at" + sep + "favre" + sep)
                        || e.contains(sep + "io" + sep + "whitfin" + sep));
    }

    /**
     * The class path of a forked {@code NettyBulkApp}: this module's classes and the Netty 4.2 QUIC
     * jars the build copies to {@code integration-tests/target/netty-current} (with the native
     * quiche library for linux-x86_64); no agent classes.
     */
    public String nettyAppClassPath() throws IOException {
        Path dir = root.resolve("integration-tests/target/netty-current");
        List<String> jars = new ArrayList<>();
        if (Files.isDirectory(dir)) {
            try (Stream<Path> s = Files.list(dir)) {
                s.filter(f -> f.getFileName().toString().endsWith(".jar")).sorted().forEach(f -> jars.add(f.toString()));
            }
        }
        if (jars.stream().noneMatch(j -> j.contains("netty-codec-native-quic"))) {
            throw new IOException("no Netty QUIC jars in " + dir + ": " + HINT);
        }
        return itClasses + File.pathSeparator + String.join(File.pathSeparator, jars);
    }
}
