package dev.ccagent.it.kwik;

import dev.ccagent.it.ForkedJvm;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** Plumbing of the safety tests: servers whose class path also holds the test-only algorithms. */
final class SafetyIt {

    private SafetyIt() {
    }

    /** This module's test classes (the test-only algorithm providers and agents). */
    static String testClasses() {
        try {
            return Path.of(SafetyAlgorithms.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** kwik's class path plus the test classes. */
    static String classPath() {
        return KwikIt.appClassPath() + File.pathSeparator + testClasses();
    }

    /** A started kwik bulk server with the agent ({@code agentArgs}) and optional extra agents first. */
    static KwikIt.Server startServer(Path dir, String name, String agentArgs, List<String> jvmArgs, String... serverArgs)
            throws IOException, InterruptedException {
        ForkedJvm.Builder b = ForkedJvm.builder(name, KwikBulkServer.class.getName())
                .classPath(classPath())
                .dir(dir)
                .jvmArgs("-Xmx512m", "-XX:+UseSerialGC")
                .jvmArgs(jvmArgs.toArray(new String[0]))
                .args("--keystore", KwikIt.keyStore().toString())
                .args(serverArgs);
        if (agentArgs != null) {
            b.javaagent(KwikIt.agentJar(), agentArgs);
        }
        return KwikIt.awaitPort(b.start());
    }

    private static Path killerJar;

    /** A manifest-only agent jar whose Premain-Class is {@link TimerKiller} (found on the class path). */
    static synchronized Path timerKillerJar() throws IOException {
        if (killerJar == null) {
            Path file = KwikIt.workDir("timer-killer").resolve("timer-killer-" + ProcessHandle.current().pid() + ".jar");
            java.util.jar.Manifest mf = new java.util.jar.Manifest();
            mf.getMainAttributes().put(java.util.jar.Attributes.Name.MANIFEST_VERSION, "1.0");
            mf.getMainAttributes().putValue("Premain-Class", TimerKiller.class.getName());
            try (java.util.jar.JarOutputStream out = new java.util.jar.JarOutputStream(Files.newOutputStream(file), mf)) {
                out.flush();
            }
            killerJar = file;
        }
        return killerJar;
    }

    /** Instances of a class in a live JVM (a full GC first: GC.class_histogram). */
    static long instances(String histogram, String className) {
        for (String line : histogram.split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length >= 4 && f[3].equals(className)) {
                return Long.parseLong(f[1]);
            }
        }
        return 0;
    }

    /** A class histogram taken once the agent's per-connection objects were gone, or at the deadline. */
    record AfterClose(String histogram, double seconds) {
        long instances(String className) {
            return SafetyIt.instances(histogram, className);
        }
    }

    /**
     * Upper bound of {@link #afterClose}'s wait: kwik's idle timeout of 30 s, which ends a server connection whose
     * client's CONNECTION_CLOSE was lost (its adapter and meter live until then), and 10 s more. kwik's closing and
     * draining states end within about a second of a clean close.
     */
    static final long AFTER_CLOSE_SECONDS = 40;

    /**
     * The server's class histogram (a full GC first) as soon as none of {@code classNames} has an instance, polled
     * every 0.5 s, or at {@link #AFTER_CLOSE_SECONDS}: a held object fails the caller's check after the longest a
     * closed connection can live, never after a fixed sleep that a slow machine can outlast.
     */
    static AfterClose afterClose(long pid, String... classNames) throws Exception {
        return afterClose(pid, AFTER_CLOSE_SECONDS, classNames);
    }

    /** {@link #afterClose(long, String...)} with a wait of at most {@code seconds} (a server's longer idle timeout). */
    static AfterClose afterClose(long pid, long seconds, String... classNames) throws Exception {
        long start = System.nanoTime();
        long deadline = start + java.util.concurrent.TimeUnit.SECONDS.toNanos(seconds);
        while (true) {
            String h = ForkedJvm.jcmd(pid, "GC.class_histogram");
            boolean none = true;
            for (String c : classNames) {
                none &= instances(h, c) == 0;
            }
            if (none || System.nanoTime() > deadline) {
                return new AfterClose(h, (System.nanoTime() - start) / 1e9);
            }
            Thread.sleep(500);
        }
    }

    /** Bytes of all instances of classes whose name starts with {@code prefix}. */
    static long bytesOf(String histogram, String prefix) {
        long sum = 0;
        for (java.util.Map.Entry<String, Long> e : bytesByClass(histogram).entrySet()) {
            if (e.getKey().startsWith(prefix)) {
                sum += e.getValue();
            }
        }
        return sum;
    }

    /** Bytes of each class's instances (a class name can occur once per loader: summed). */
    static java.util.Map<String, Long> bytesByClass(String histogram) {
        java.util.Map<String, Long> m = new java.util.LinkedHashMap<>();
        for (String line : histogram.split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length >= 4 && f[0].endsWith(":")) {
                m.merge(f[3], Long.parseLong(f[2]), Long::sum);
            }
        }
        return m;
    }

    /** Starts the JVM's local JMX agent through the Attach API; returns its connector address. */
    static String managementUrl(long pid) throws Exception {
        com.sun.tools.attach.VirtualMachine vm = com.sun.tools.attach.VirtualMachine.attach(Long.toString(pid));
        try {
            return vm.startLocalManagementAgent();
        } finally {
            vm.detach();
        }
    }

    static int count(String text, String needle) {
        int n = 0;
        for (int i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + needle.length())) {
            n++;
        }
        return n;
    }

    private static final java.util.regex.Pattern HOLDING = java.util.regex.Pattern.compile("^HOLDING (\\d+)");

    /**
     * A {@link HoldClient} that opened {@code n} connections to {@code port} (with a download of
     * {@code bytes} each, 0 for none) and holds them open until it is closed.
     */
    static ForkedJvm hold(Path dir, String name, int port, int n, long bytes) throws IOException, InterruptedException {
        ForkedJvm jvm = ForkedJvm.builder(name, HoldClient.class.getName())
                .classPath(classPath()).dir(dir)
                .jvmArgs("-Xmx1g", "-XX:+UseSerialGC")
                .javaagent(KwikIt.agentJar(), KwikBulkClient.CLIENT_AGENT)
                .args(Integer.toString(port), Integer.toString(n), Long.toString(bytes))
                .start();
        try {
            jvm.awaitLine(HOLDING, java.time.Duration.ofSeconds(600));
            Thread.sleep(1000);
            return jvm;
        } catch (IOException | InterruptedException | RuntimeException e) {
            jvm.close();
            throw e;
        }
    }

    /**
     * Opens {@code n} connections (with a download of {@code bytes} each, 0 for none), closes them and
     * waits out kwik's draining period: the first connections' one-time costs (classes loaded, caches
     * filled) are paid before a reading that counts per-connection ones.
     */
    static void warmUp(Path dir, String name, int port, int n, long bytes) throws IOException, InterruptedException {
        try (ForkedJvm warm = hold(dir, name, port, n, bytes)) {
            warm.closeStdin();
            warm.waitFor(java.time.Duration.ofSeconds(60));
        }
        Thread.sleep(3000); // kwik forgets a closed connection after its draining period
    }

    /** The agent's instances in a histogram: {@code dev.ccagent.*} without the test apps' ({@code dev.ccagent.it.*}). */
    static long agentBytes(String histogram) {
        return bytesOf(histogram, "dev.ccagent.") - bytesOf(histogram, "dev.ccagent.it.");
    }

    /** The histogram's Total bytes. */
    static long heapTotal(String histogram) {
        for (String line : histogram.split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length == 3 && f[0].equals("Total")) {
                return Long.parseLong(f[2]);
            }
        }
        throw new IllegalStateException("no Total line in\n" + histogram);
    }
}
