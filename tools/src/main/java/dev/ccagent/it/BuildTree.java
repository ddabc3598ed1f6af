package dev.ccagent.it;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * The build tree around {@code agent/target/ccagent.jar}: the tools module's classes and its run-time
 * class path file ({@code tools/target/classpath.txt}, written by the build), test-apps' classes (the
 * servers and clients) and the emulator's. Used by the demo ({@code tools/target/ccagent-demo.jar}) and
 * the benchmarks, which run outside Maven.
 */
public final class BuildTree {

    public static final String HINT = "run mvn -B -q package -DskipTests in the repository first";

    private final Path root;
    private final Path agentJar;
    private final Path toolsClasses;
    private final Path appClasses;
    private final Path emulatorClasses;
    private final String runtimeClassPath;

    private BuildTree(Path root, Path agentJar, Path toolsClasses, Path appClasses, Path emulatorClasses,
                      String runtimeClassPath) {
        this.root = root;
        this.agentJar = agentJar;
        this.toolsClasses = toolsClasses;
        this.appClasses = appClasses;
        this.emulatorClasses = emulatorClasses;
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
        Path classes = root.resolve("tools/target/classes");
        Path apps = root.resolve("test-apps/target/classes");
        Path emulator = root.resolve("emulator/target/classes");
        Path cpFile = root.resolve("tools/target/classpath.txt");
        for (Path dir : List.of(classes.resolve("dev/ccagent/it/demo"), apps.resolve("dev/ccagent/it/kwik"),
                emulator.resolve("dev/ccagent/it/emulator"))) {
            if (!Files.isDirectory(dir)) {
                throw new IOException("the build tree next to " + jar + " has no " + root.relativize(dir) + ": " + HINT);
            }
        }
        if (!Files.isRegularFile(cpFile)) {
            throw new IOException("the build tree next to " + jar + " has no " + root.relativize(cpFile) + ": " + HINT);
        }
        String cp = Files.readString(cpFile).strip();
        for (String e : cp.split(File.pathSeparator)) {
            if (!e.isEmpty() && !Files.exists(Path.of(e))) {
                throw new IOException("class path entry " + e + " (from " + cpFile + ") is missing: " + HINT);
            }
        }
        return new BuildTree(root, jar, classes, apps, emulator, cp);
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

    /**
     * The tools module's classes plus its run-time dependencies (test-apps, the emulator, kwik, cc-impl,
     * Byte Buddy, JFreeChart).
     */
    public String fullClassPath() {
        return toolsClasses + (runtimeClassPath.isEmpty() ? "" : File.pathSeparator + runtimeClassPath);
    }

    /**
     * The class path of forked kwik servers and clients: test-apps' classes and kwik with its
     * dependencies only — never the agent, cc-impl or Byte Buddy (they come with -javaagent, as in
     * production).
     */
    public String kwikAppClassPath() {
        String sep = File.separator;
        return appClasses + File.pathSeparator + ForkedJvm.filterClassPath(runtimeClassPath,
                e -> e.contains(sep + "tech" + sep + "kwik" + sep) || e.contains(sep + "at" + sep + "favre" + sep)
                        || e.contains(sep + "io" + sep + "whitfin" + sep));
    }

    /**
     * The class path of Flupke 0.6's sample HTTP/3 file server: kwik with its dependencies (as
     * {@link #kwikAppClassPath()}, without our test applications) and the flupke and qpack jars the build copies
     * to {@code tools/target/apps}; no class of ours.
     */
    public String flupkeSampleClassPath() throws IOException {
        String sep = File.separator;
        Path apps = root.resolve("tools").resolve("target").resolve("apps");
        Path flupke = apps.resolve("flupke-0.6.jar");
        if (!Files.exists(flupke)) {
            throw new IOException(flupke + " is missing: " + HINT);
        }
        String qpack;
        try (java.util.stream.Stream<Path> all = Files.list(apps)) {
            qpack = all.map(Path::toString).filter(n -> n.contains(sep + "qpack-")).findFirst()
                    .orElseThrow(() -> new IOException("no qpack jar in " + apps + ": " + HINT));
        }
        return ForkedJvm.filterClassPath(runtimeClassPath,
                e -> e.contains(sep + "tech" + sep + "kwik" + sep + "kwik" + sep) || e.contains(sep + "agent15")
                        || e.contains(sep + "at" + sep + "favre" + sep) || e.contains(sep + "io" + sep + "whitfin" + sep))
                + File.pathSeparator + flupke + File.pathSeparator + qpack;
    }

    /**
     * The class path of a forked {@code NettyBulkApp}: test-apps' classes, the emulator's (it runs one in
     * its JVM) and the Netty 4.2 QUIC jars the build copies to
     * {@code test-apps/netty-jars/netty-current/target/jars} (with the native quiche library for
     * linux-x86_64); no agent classes.
     */
    public String nettyAppClassPath() throws IOException {
        Path dir = root.resolve("test-apps/netty-jars/netty-current/target/jars");
        List<String> jars = new ArrayList<>();
        if (Files.isDirectory(dir)) {
            try (Stream<Path> s = Files.list(dir)) {
                s.filter(f -> f.getFileName().toString().endsWith(".jar")).sorted().forEach(f -> jars.add(f.toString()));
            }
        }
        if (jars.stream().noneMatch(j -> j.contains("netty-codec-native-quic"))) {
            throw new IOException("no Netty QUIC jars in " + dir + ": " + HINT);
        }
        // the emulator runs inside the Netty app's JVM: its classes and the link model they play out
        return appClasses + File.pathSeparator + emulatorClasses + File.pathSeparator
                + emulatorClasses.getParent().getParent().getParent().resolve("link-model/target/classes")
                + File.pathSeparator + String.join(File.pathSeparator, jars);
    }
}
