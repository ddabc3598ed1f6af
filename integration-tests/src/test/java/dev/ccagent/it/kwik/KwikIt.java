package dev.ccagent.it.kwik;

import dev.ccagent.it.ForkedJvm;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** Shared plumbing: the agent jar, the children's class path, starting servers and running clients. */
final class KwikIt {

    /** Generous: the CI machine has 2 cores shared with other builds. */
    static final Duration START_TIMEOUT = Duration.ofSeconds(90);

    static final Pattern PORT = Pattern.compile("^PORT (\\d+)");
    /** The agent's per-connection line (log=debug): role, id, arm, algorithm. */
    static final Pattern CONNECTION_LINE = Pattern.compile(
            "\\[ccagent] DEBUG kwik (server|client) connection ([0-9a-f]+|\\(unknown id\\)): (\\w+) arm, ([\\w-]+)");
    static final Pattern RESULT = Pattern.compile(
            "^RESULT conn=(\\d+) odcid=(\\S+) mode=(\\w+) (?:bytes=(\\d+) seconds=([\\d.]+) mbps=([\\d.]+) )?ok=(\\w+)(?: error=(\\S+))?");
    /** {@code KwikBulkClient}'s end of a transfer on its {@code System.nanoTime()}, the machine's CLOCK_MONOTONIC. */
    static final Pattern MONO_END = Pattern.compile("^MONO RESULT conn=\\d+ start=\\d+ end=(\\d+)", Pattern.MULTILINE);
    static final Pattern SERVED = Pattern.compile(
            "^SERVED mode=(\\w+) bytes=(\\d+) seconds=([\\d.]+) cpuNanos=(-?\\d+)(?: jitCpuNanos=(-?\\d+))?");

    private KwikIt() {
    }

    static Path agentJar() {
        String p = System.getProperty("ccagent.jar");
        assertTrue(p != null, "system property ccagent.jar is not set (run through Maven)");
        Path jar = Path.of(p).toAbsolutePath().normalize();
        assertTrue(Files.isRegularFile(jar), jar + " does not exist: build the agent module first");
        return jar;
    }

    /**
     * The forked JVMs' class path: test-apps' classes (where the servers and clients are, a directory or
     * jar on the test class path) and kwik with its dependencies only; never
     * the agent's classes, cc-impl or Byte Buddy (they come only with -javaagent or attach, as in
     * production).
     */
    static String appClassPath() {
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        String sep = File.separator;
        String mine = testAppsClasses();
        String result = ForkedJvm.filterClassPath(cp, e -> Path.of(e).toAbsolutePath().normalize().toString().equals(mine)
                || e.contains(sep + "tech" + sep + "kwik" + sep)
                || e.contains(sep + "at" + sep + "favre" + sep)
                || e.contains(sep + "io" + sep + "whitfin" + sep));
        assertTrue(result.contains(mine) && result.contains("kwik-"), "unexpected test class path: " + cp);
        return result;
    }

    /** Where test-apps' classes are on the test class path ({@link KwikBulkServer}'s code source). */
    static String testAppsClasses() {
        try {
            return Path.of(KwikBulkServer.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toAbsolutePath()
                    .normalize().toString();
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The class path plus Byte Buddy, for servers that also run the test-only {@link StallWidener}. */
    static String appClassPathWithByteBuddy() {
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        String bb = ForkedJvm.filterClassPath(cp, e -> e.contains(File.separator + "byte-buddy-1"));
        assertTrue(!bb.isEmpty(), "byte-buddy not on the test class path: " + cp);
        return appClassPath() + File.pathSeparator + bb;
    }

    private static final java.util.Map<String, Path> TEST_AGENT_JARS = new java.util.HashMap<>();

    /**
     * A manifest-only agent jar whose Premain-Class is {@code premain} (a test-only agent, found on the
     * forked JVM's class path), written once per test JVM into the work directory {@code name}.
     * {@code canRetransform}: the agent changes classes that are loaded already (the JDK's own).
     */
    static synchronized Path testAgentJar(String name, Class<?> premain, boolean canRetransform) throws IOException {
        Path jar = TEST_AGENT_JARS.get(name);
        if (jar == null) {
            jar = workDir(name).resolve(name + "-" + ProcessHandle.current().pid() + ".jar");
            java.util.jar.Manifest mf = new java.util.jar.Manifest();
            mf.getMainAttributes().put(java.util.jar.Attributes.Name.MANIFEST_VERSION, "1.0");
            mf.getMainAttributes().putValue("Premain-Class", premain.getName());
            if (canRetransform) {
                mf.getMainAttributes().putValue("Can-Retransform-Classes", "true");
            }
            try (java.util.jar.JarOutputStream out = new java.util.jar.JarOutputStream(Files.newOutputStream(jar), mf)) {
                out.flush();
            }
            TEST_AGENT_JARS.put(name, jar);
        }
        return jar;
    }

    /** The agent jar of {@link StallWidener}. */
    static Path stallWidenerJar() throws IOException {
        return testAgentJar("stall-widener", StallWidener.class, false);
    }

    static Path workDir(String test) throws IOException {
        Path base = Path.of(System.getProperty("ccagent.it.work", System.getProperty("java.io.tmpdir")));
        Path dir = base.resolve(test);
        Files.createDirectories(dir);
        return dir;
    }

    /** {@code name} in a test's work directory, absolute, and gone (a previous run's file deleted). */
    static Path freshFile(Path dir, String name) throws IOException {
        Path file = dir.resolve(name).toAbsolutePath();
        Files.deleteIfExists(file);
        return file;
    }

    /**
     * Loads ccagent into the running JVM {@code pid} through the attach API, as an operator does; a second
     * load of the same jar reconfigures it ("reconfigured on attach").
     */
    static void attach(long pid, String agentArgs) throws Exception {
        attach(pid, agentJar(), agentArgs);
    }

    /** Loads {@code jar} as an agent into the running JVM {@code pid} through the Attach API, then detaches. */
    static void attach(long pid, Path jar, String agentArgs) throws Exception {
        com.sun.tools.attach.VirtualMachine vm = com.sun.tools.attach.VirtualMachine.attach(Long.toString(pid));
        try {
            vm.loadAgent(jar.toString(), agentArgs);
        } finally {
            vm.detach();
        }
    }

    /** A started server and its port. */
    static final class Server implements AutoCloseable {
        final ForkedJvm jvm;
        final int port;

        Server(ForkedJvm jvm, int port) {
            this.jvm = jvm;
            this.port = port;
        }

        /** Agent log lines so far. */
        List<String> agentLines() {
            return agentLines(jvm.stderr());
        }

        static List<String> agentLines(String stderr) {
            List<String> out = new ArrayList<>();
            for (String l : stderr.split("\n")) {
                if (l.contains("[ccagent]")) {
                    out.add(l);
                }
            }
            return out;
        }

        @Override
        public void close() {
            jvm.close();
        }
    }

    private static Path keyStore;

    /** One self-signed key store for all servers of this test JVM (keytool costs a JVM start). */
    static synchronized Path keyStore() throws IOException, InterruptedException {
        if (keyStore == null) {
            Path dir = workDir("keystore");
            Path file = dir.resolve("server-" + ProcessHandle.current().pid() + ".p12");
            Files.deleteIfExists(file);
            SelfSignedKeyStore.generate(file);
            keyStore = file;
        }
        return keyStore;
    }

    /** Starts a server; {@code agentArgs} null for none. Waits for its PORT line. */
    static Server startServer(Path dir, String name, String agentArgs, String... serverArgs)
            throws IOException, InterruptedException {
        return awaitPort(launchServer(dir, name, agentArgs, serverArgs));
    }

    /** The agent jar of {@link LossTimerWidener}. */
    static Path lossTimerWidenerJar() throws IOException {
        return testAgentJar("loss-timer-widener", LossTimerWidener.class, false);
    }

    /**
     * A client that also runs the test-only {@link LossTimerWidener} (before the agent; {@link #NO_AGENT}
     * for none).
     */
    static ForkedJvm launchClientWithLossTimerWidener(Path dir, String name, String agentArgs, Duration timeout,
                                                      String... args) throws IOException {
        ForkedJvm.Builder b = clientBuilder(dir, name, appClassPathWithByteBuddy(), timeout, args);
        b.javaagent(lossTimerWidenerJar(), null);
        if (!NO_AGENT.equals(agentArgs)) {
            b.javaagent(agentJar(), agentArgs);
        }
        return b.start();
    }

    /** Starts a server JVM without waiting (see {@link #awaitPort}): to start several side by side. */
    static ForkedJvm launchServer(Path dir, String name, String agentArgs, String... serverArgs)
            throws IOException, InterruptedException {
        return launchServer(dir, name, agentArgs, false, serverArgs);
    }

    /** As above; {@code widenRace}: also load the test-only {@link StallWidener} (before the agent). */
    static ForkedJvm launchServer(Path dir, String name, String agentArgs, boolean widenRace, String... serverArgs)
            throws IOException, InterruptedException {
        return launchServer(dir, name, agentArgs, widenRace, b -> b, serverArgs);
    }

    /** As above; {@code more}: what else the server JVM gets (another agent after ours, say). */
    static ForkedJvm launchServer(Path dir, String name, String agentArgs, boolean widenRace,
                                  java.util.function.UnaryOperator<ForkedJvm.Builder> more, String... serverArgs)
            throws IOException, InterruptedException {
        ForkedJvm.Builder b = ForkedJvm.builder(name, KwikBulkServer.class.getName())
                .classPath(widenRace ? appClassPathWithByteBuddy() : appClassPath())
                .dir(dir)
                .jvmArgs("-Xmx512m", "-XX:+UseSerialGC")
                .args("--keystore", keyStore().toString())
                .args(serverArgs);
        if (widenRace) {
            b.javaagent(stallWidenerJar(), null);
        }
        if (agentArgs != null) {
            b.javaagent(agentJar(), agentArgs);
        }
        return more.apply(b).start();
    }

    /**
     * Starts the server {@code b} describes (its main class or jar, class path and directory) with the servers'
     * heap, collector and key store and, unless {@code agentArgs} is null, the agent; waits for its PORT line.
     */
    static Server startServer(ForkedJvm.Builder b, String agentArgs) throws IOException, InterruptedException {
        b.jvmArgs("-Xmx512m", "-XX:+UseSerialGC").args("--keystore", keyStore().toString());
        if (agentArgs != null) {
            b.javaagent(agentJar(), agentArgs);
        }
        return awaitPort(b.start());
    }

    /** Waits for a launched server's PORT line; closes it on failure. */
    static Server awaitPort(ForkedJvm jvm) throws IOException, InterruptedException {
        try {
            Matcher m = jvm.awaitLine(PORT, START_TIMEOUT);
            return new Server(jvm, Integer.parseInt(m.group(1)));
        } catch (IOException | InterruptedException | RuntimeException e) {
            jvm.close();
            throw e;
        }
    }

    /** A finished client run. */
    static final class ClientRun {
        final int exit;
        final String stdout;
        final String stderr;
        final List<Matcher> results = new ArrayList<>();
        final String describe;

        ClientRun(int exit, String stdout, String stderr, String describe) {
            this.exit = exit;
            this.stdout = stdout;
            this.stderr = stderr;
            this.describe = describe;
            for (String l : stdout.split("\n")) {
                Matcher m = RESULT.matcher(l);
                if (m.find()) {
                    results.add(m);
                }
            }
        }

        /** Attempts the client abandoned as stalled and retried (kwik's own stream-send race). */
        long retries() {
            return stdout.lines().filter(l -> l.startsWith("RETRY ")).count();
        }

        boolean allOk(int expected) {
            return exit == 0 && results.size() == expected && results.stream().allMatch(m -> m.group(7).equals("true"));
        }
    }

    /** Runs a client to completion ({@code agentArgs} null for none). */
    static ClientRun runClient(Path dir, String name, String agentArgs, Duration timeout, String... args)
            throws IOException, InterruptedException {
        return finish(launchClient(dir, name, agentArgs, timeout, args), timeout);
    }

    /** {@code agentArgs} for a client that runs without any agent: kwik exactly as released, on both counts. */
    static final String NO_AGENT = "";

    /**
     * Starts a client without waiting for it (see {@link #finish}); {@code agentArgs} null: kwik's two fixes
     * only ({@link KwikBulkClient#CLIENT_AGENT}: the client writes a stream too);
     * {@link #NO_AGENT}: none.
     */
    static ForkedJvm launchClient(Path dir, String name, String agentArgs, Duration timeout, String... args)
            throws IOException {
        ForkedJvm.Builder b = clientBuilder(dir, name, appClassPath(), timeout, args);
        if (!NO_AGENT.equals(agentArgs)) {
            b.javaagent(agentJar(), agentArgs != null ? agentArgs : KwikBulkClient.CLIENT_AGENT);
        }
        return b.start();
    }

    /** A {@link KwikBulkClient} JVM on {@code classPath} with its heap, collector, arguments and timeout; no agent yet. */
    private static ForkedJvm.Builder clientBuilder(Path dir, String name, String classPath, Duration timeout,
                                                   String... args) {
        return ForkedJvm.builder(name, KwikBulkClient.class.getName())
                .classPath(classPath)
                .dir(dir)
                .jvmArgs("-Xmx512m", "-XX:+UseSerialGC")
                .args(args)
                .args("--timeout-seconds", Long.toString(timeout.toSeconds()));
    }

    /** Waits for a launched client and closes it. */
    static ClientRun finish(ForkedJvm client, Duration timeout) throws IOException, InterruptedException {
        try (ForkedJvm jvm = client) {
            int exit = jvm.waitFor(timeout.plusSeconds(30));
            return new ClientRun(exit, jvm.stdout(), jvm.stderr(), jvm.describe());
        }
    }

    static List<Matcher> connectionLines(String stderr) {
        List<Matcher> out = new ArrayList<>();
        for (String l : stderr.split("\n")) {
            Matcher m = CONNECTION_LINE.matcher(l);
            if (m.find()) {
                out.add(m);
            }
        }
        return out;
    }
}
