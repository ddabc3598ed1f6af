package dev.ccagent.it.netty;

import dev.ccagent.it.ForkedJvm;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Runs {@link NettyBulkApp} in a {@link ForkedJvm} on one Netty version's class path with the agent.
 * Only the Netty specifics live here: per-version jar directories from the pom, the incubator copy of
 * the app compiled at test time, a self-signed key store made with keytool.
 */
final class NettyApp {

    enum Version {
        CURRENT("netty.jars.current"), OLD("netty.jars.old"), INCUBATOR("netty.jars.incubator"),
        /** 4.2.11: the first 4.2.x whose quiche takes BBR as id 4. */
        BBR4_FIRST("netty.jars.bbr4-first"),
        /** 4.2.18: the newest 4.2.x with a served linux-x86_64 native jar (quiche 0.29.3). */
        LATEST("netty.jars.latest");

        final String property;

        Version(String property) {
            this.property = property;
        }
    }

    static final Path WORK = Path.of("target", "netty-it");
    private static Path keystore;
    private static String incubatorClasses;

    /** {@code name} in {@link #WORK}, absolute, deleted if an earlier run left it (a recording's or a signal's path). */
    static Path freshFile(String name) throws IOException {
        Path file = WORK.resolve(name).toAbsolutePath();
        Files.deleteIfExists(file);
        return file;
    }

    /** The output of one run. */
    static final class Run {
        final int exit;
        final String out;
        final String err;

        Run(int exit, String out, String err) {
            this.exit = exit;
            this.out = out;
            this.err = err;
        }

        List<String> lines(String contains) {
            return Stream.concat(out.lines(), err.lines()).filter(l -> l.contains(contains)).collect(Collectors.toList());
        }

        /** The last number after {@code key=} on the last line containing {@code contains}. */
        long number(String contains, String key) {
            List<String> l = lines(contains);
            if (l.isEmpty()) {
                throw new AssertionError("no line with '" + contains + "' in\n" + tail());
            }
            Matcher m = Pattern.compile("\\b" + Pattern.quote(key) + "=(-?[0-9]+)").matcher(l.get(l.size() - 1));
            long v = Long.MIN_VALUE;
            while (m.find()) {
                v = Long.parseLong(m.group(1));
            }
            if (v == Long.MIN_VALUE) {
                throw new AssertionError("no " + key + "= in " + l.get(l.size() - 1));
            }
            return v;
        }

        String tail() {
            String all = out + "\n--- stderr ---\n" + err;
            return all.length() > 6000 ? all.substring(all.length() - 6000) : all;
        }
    }

    private NettyApp() {
    }

    static synchronized Path keystore() throws Exception {
        if (keystore == null) {
            Files.createDirectories(WORK);
            Path ks = WORK.resolve("localhost.p12").toAbsolutePath();
            Files.deleteIfExists(ks);
            String keytool = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
            Process p = new ProcessBuilder(keytool, "-genkeypair", "-alias", "localhost", "-keyalg", "EC", "-groupname",
                    "secp256r1", "-dname", "CN=localhost", "-ext", "san=dns:localhost,ip:127.0.0.1", "-validity", "7",
                    "-storetype", "PKCS12", "-keystore", ks.toString(), "-storepass", "changeit", "-keypass", "changeit")
                    .redirectErrorStream(true).redirectOutput(WORK.resolve("keytool.log").toFile()).start();
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                throw new IllegalStateException("keytool failed: " + Files.readString(WORK.resolve("keytool.log")));
            }
            keystore = ks;
        }
        return keystore;
    }

    static String jars(Version v) throws IOException {
        Path dir = Path.of(System.getProperty(v.property));
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.toString().endsWith(".jar")).map(Path::toString).sorted()
                    .collect(Collectors.joining(File.pathSeparator));
        }
    }

    /**
     * test-apps' classes (NettyBulkApp) and the emulator's with the link model it plays out, which
     * NettyBulkApp runs in its own JVM (directories named by system properties the pom sets).
     */
    static String testAppsClassPath() {
        return System.getProperty("it.classes") + File.pathSeparator + System.getProperty("it.emulator.classes")
                + File.pathSeparator + System.getProperty("it.link-model.classes");
    }

    /** The app's classes for a version: test-apps' for 4.2, a copy with the incubator's package otherwise. */
    static synchronized String appClasses(Version v) throws Exception {
        String itClasses = testAppsClassPath();
        if (v != Version.INCUBATOR) {
            return itClasses;
        }
        if (incubatorClasses == null) {
            Path dir = WORK.resolve("incubator-app");
            List<String> sources = new java.util.ArrayList<>();
            for (String name : List.of("NettyBulkApp.java", "QuicheWindowProbe.java")) {
                Path src = Path.of(System.getProperty("it.sources"), "dev", "ccagent", "it", "netty", name);
                Path copy = dir.resolve("src/dev/ccagent/it/netty/" + name);
                Files.createDirectories(copy.getParent());
                Files.writeString(copy, Files.readString(src).replace("io.netty.handler.codec.quic",
                        "io.netty.incubator.codec.quic"), StandardCharsets.UTF_8);
                sources.add(copy.toString());
            }
            Path out = dir.resolve("classes");
            Files.createDirectories(out);
            JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
            List<String> javacArgs = new java.util.ArrayList<>(List.of("-nowarn", "-d", out.toString(), "-cp",
                    itClasses + File.pathSeparator + jars(Version.INCUBATOR)));
            javacArgs.addAll(sources);
            int rc = javac.run(null, null, null, javacArgs.toArray(new String[0]));
            if (rc != 0) {
                throw new IllegalStateException("compiling the incubator copy of NettyBulkApp failed");
            }
            incubatorClasses = out.toAbsolutePath().toString();
        }
        return incubatorClasses + File.pathSeparator + itClasses;
    }

    /** Runs the app with the agent ({@code agentArgs}) and waits at most {@code timeoutSeconds}. */
    static Run run(String name, Version v, String agentArgs, long timeoutSeconds, String... appArgs) throws Exception {
        return run(name, v, agentArgs, timeoutSeconds, List.of(), appArgs);
    }

    /** The same, with extra JVM options for the forked app (e.g. a test-only system property). */
    static Run run(String name, Version v, String agentArgs, long timeoutSeconds, List<String> jvmArgs,
                   String... appArgs) throws Exception {
        return runMain(name, "dev.ccagent.it.netty.NettyBulkApp", appClasses(v) + File.pathSeparator + jars(v), agentArgs,
                timeoutSeconds, jvmArgs, appArgs);
    }

    /** A directory of jars named by a system property (set by the pom), as a class path. */
    static String jars(String property) throws IOException {
        try (Stream<Path> s = Files.list(Path.of(System.getProperty(property)))) {
            return s.filter(p -> p.toString().endsWith(".jar")).map(Path::toString).sorted()
                    .collect(Collectors.joining(File.pathSeparator));
        }
    }

    /**
     * Compiles one framework application ({@code src/frameworks/java/dev/ccagent/it/netty/NAME.java}) against
     * {@code classPath} (it uses the emulator and NettyBulkApp's helpers) into its own directory.
     */
    static synchronized String frameworkClasses(String simpleName, String classPath) throws Exception {
        Path src = Path.of(System.getProperty("it.frameworks.sources"), "dev", "ccagent", "it", "netty",
                simpleName + ".java");
        Path out = WORK.resolve("framework-" + simpleName).toAbsolutePath();
        Files.createDirectories(out);
        // the other framework sources on the source path: an application may use another's helpers (compiled with it)
        int rc = ToolProvider.getSystemJavaCompiler().run(null, null, null, "-nowarn", "-d", out.toString(), "-cp",
                testAppsClassPath() + File.pathSeparator + classPath, "-sourcepath",
                System.getProperty("it.frameworks.sources"), src.toString());
        if (rc != 0) {
            throw new IllegalStateException("compiling " + src + " failed");
        }
        return out + File.pathSeparator + testAppsClassPath();
    }

    /** Runs {@code mainClass} on {@code classPath} with the agent (none when {@code agentArgs} is null) and waits at most {@code timeoutSeconds}. */
    static Run runMain(String name, String mainClass, String classPath, String agentArgs, long timeoutSeconds,
                       String... appArgs) throws Exception {
        return runMain(name, mainClass, classPath, agentArgs, timeoutSeconds, List.of(), appArgs);
    }

    /** The same, with extra JVM options for the forked app. */
    static Run runMain(String name, String mainClass, String classPath, String agentArgs, long timeoutSeconds,
                       List<String> jvmArgs, String... appArgs) throws Exception {
        ForkedJvm.Builder b = ForkedJvm.builder(name, mainClass)
                .dir(WORK)
                .jvmArgs("-Xmx256m", "-XX:+UseSerialGC")
                .jvmArgs(jvmArgs.toArray(new String[0]))
                .classPath(classPath)
                .args("keystore=" + keystore())
                .args(appArgs);
        if (agentArgs != null) {
            b.javaagent(Path.of(System.getProperty("ccagent.jar")).normalize(), agentArgs);
        }
        try (ForkedJvm jvm = b.start()) {
            int exit = jvm.waitFor(Duration.ofSeconds(timeoutSeconds));
            return new Run(exit, jvm.stdout(), jvm.stderr());
        }
    }
}
