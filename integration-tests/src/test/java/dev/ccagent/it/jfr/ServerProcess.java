package dev.ccagent.it.jfr;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * A forked JVM running {@link JfrBulkServer} with {@code -javaagent:ccagent.jar=ARGS}. Its class path
 * is kwik's jars plus this module's test classes (the faulty algorithm's provider), never cc-impl or
 * the agent's classes: those come from the agent jar, as in production. Closing it closes the
 * server's standard input, waits for a normal exit (so JFR writes its recording) and kills it after
 * a grace period.
 */
final class ServerProcess implements AutoCloseable {

    final Process process;
    final int port;
    final Path log;

    private ServerProcess(Process process, int port, Path log) {
        this.process = process;
        this.port = port;
        this.log = log;
    }

    static Path agentJar() {
        Path jar = Path.of(System.getProperty("ccagent.jar", "../agent/target/ccagent.jar")).toAbsolutePath().normalize();
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException(jar + " missing: build the agent first (mvn install -DskipTests)");
        }
        return jar;
    }

    static Path keystore(Path dir) throws Exception {
        Path ks = dir.resolve("server.p12");
        if (Files.exists(ks)) {
            return ks;
        }
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair", "-alias", "server", "-keyalg", "EC", "-groupname", "secp256r1",
                "-sigalg", "SHA256withECDSA", "-dname", "CN=localhost", "-storetype", "PKCS12",
                "-keystore", ks.toString(), "-storepass", "secret", "-keypass", "secret", "-validity", "2")
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException("keytool failed: " + out);
        }
        return ks;
    }

    static String serverClassPath() {
        // the server and client mains (test-apps) and this module's test classes (the test-only algorithm
        // providers with their META-INF/services entry)
        String testApps = Path.of(JfrBulkServer.class.getProtectionDomain().getCodeSource().getLocation().getPath())
                .toString();
        String testClasses = Path.of(ServerProcess.class.getProtectionDomain().getCodeSource().getLocation().getPath())
                .toString();
        List<String> cp = new ArrayList<>();
        cp.add(testApps);
        cp.add(testClasses);
        for (String e : System.getProperty("java.class.path").split(File.pathSeparator)) {
            String name = Path.of(e).getFileName().toString();
            if (name.startsWith("kwik-") || name.startsWith("agent15-") || name.startsWith("hkdf-")
                    || name.startsWith("siphash-")) {
                cp.add(e);
            }
        }
        return cp.stream().collect(Collectors.joining(File.pathSeparator));
    }

    static ServerProcess start(Path dir, String agentArgs, long responseBytes) throws Exception {
        Path portFile = dir.resolve("port-" + System.nanoTime());
        Path log = dir.resolve("server-" + System.nanoTime() + ".log");
        List<String> cmd = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                // the stream-stall fix on every server: kwik's stream-send race (not what these tests
                // are about) otherwise freezes the answer now and then
                "-javaagent:" + agentJar() + "=" + agentArgs + ";fix.kwik-stream-stall=on",
                "-cp", serverClassPath(),
                JfrBulkServer.class.getName(), keystore(dir).toString(), portFile.toString(),
                Long.toString(responseBytes)));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!Files.exists(portFile)) {
            if (!p.isAlive() || System.nanoTime() > deadline) {
                p.destroyForcibly();
                throw new IllegalStateException("server did not start: " + Files.readString(log));
            }
            Thread.sleep(50);
        }
        return new ServerProcess(p, Integer.parseInt(Files.readString(portFile).trim()), log);
    }

    /**
     * Runs {@link BulkClientMain} in a forked JVM (stock kwik plus the stream-stall fix); calls
     * {@code onConnected} when it reports the handshake; returns the answer's size (-1: no result).
     */
    static long client(int port, long upload, int pauseMillis, int deadlineSeconds, Runnable onConnected)
            throws Exception {
        List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-javaagent:" + agentJar() + "=fix.kwik-stream-stall=on;detect=off;log=warn",
                "-cp", serverClassPath(), BulkClientMain.class.getName(), Integer.toString(port), Long.toString(upload),
                Integer.toString(pauseMillis), Integer.toString(deadlineSeconds));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        long answered = -1;
        StringBuilder all = new StringBuilder();
        try (java.io.BufferedReader r = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream()))) {
            for (String line; (line = r.readLine()) != null; ) {
                all.append(line).append('\n');
                if (line.equals("connected")) {
                    onConnected.run();
                } else if (line.startsWith("answered ")) {
                    answered = Long.parseLong(line.substring(9).trim());
                }
            }
        } finally {
            if (!p.waitFor(deadlineSeconds + 60L, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
        if (answered < 0) {
            System.out.println("client output:\n" + all);
        }
        return answered;
    }

    String output() throws IOException {
        return Files.readString(log);
    }

    @Override
    public void close() throws Exception {
        try {
            process.getOutputStream().close();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroy();
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            }
        } finally {
            if (process.isAlive()) {
                process.destroyForcibly();
            }
        }
    }
}
