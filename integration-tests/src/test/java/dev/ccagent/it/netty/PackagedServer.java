package dev.ccagent.it.netty;

import dev.ccagent.it.ForkedJvm;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One packaged HTTP/3 server jar ({@code java -jar}: the Spring Boot jar, the shaded Vert.x and Micronaut jars) in a
 * forked JVM, bare or with the agent at start (and the Prometheus JMX exporter as a second
 * {@code -javaagent}); its port from its {@code LISTENING port=} line. {@link #stop} closes its standard
 * input, on which the applications shut down cleanly (so a recording is complete); {@link #close} ends
 * the process if it is still running.
 */
final class PackagedServer implements AutoCloseable {

    static final Pattern LISTENING = Pattern.compile("LISTENING port=(\\d+)");

    final ForkedJvm jvm;
    final int port;

    private PackagedServer(ForkedJvm jvm, int port) {
        this.jvm = jvm;
        this.port = port;
    }

    /** The jar named by a system property the pom sets, checked to exist. */
    static Path jar(String property) {
        String p = System.getProperty(property);
        assertTrue(p != null, "system property " + property + " is not set (run through Maven)");
        Path jar = Path.of(p).toAbsolutePath().normalize();
        assertTrue(Files.isRegularFile(jar), jar + " does not exist: build its module first");
        return jar;
    }

    static Path agentJar() {
        return jar("ccagent.jar");
    }

    /**
     * Starts {@code jar} with {@code appArgs}; {@code agentArgs} null for a bare server (attachable later),
     * {@code exporter} null or {@code JAR=ARGS} of the Prometheus exporter.
     */
    static PackagedServer start(Path dir, String name, Path jar, List<String> appArgs, String agentArgs,
                                String exporter) throws Exception {
        ForkedJvm.Builder b = ForkedJvm.builder(name, "(executable jar " + jar.getFileName() + ")")
                .executableJar(jar)
                .dir(dir)
                .jvmArgs("-Xmx512m", "-XX:+UseSerialGC", "-XX:+EnableDynamicAgentLoading")
                .args(appArgs);
        if (agentArgs != null) {
            b.javaagent(agentJar(), agentArgs);
        }
        if (exporter != null) {
            int eq = exporter.indexOf('=');
            b.javaagent(Path.of(exporter.substring(0, eq)), exporter.substring(eq + 1));
        }
        ForkedJvm jvm = b.start();
        try {
            // a Spring Boot start on a loaded 2-core machine takes 15 s or more
            java.util.regex.Matcher m = jvm.awaitLine(LISTENING, Duration.ofSeconds(120));
            return new PackagedServer(jvm, Integer.parseInt(m.group(1)));
        } catch (Throwable t) {
            String described = jvm.describe();
            jvm.close();
            throw new AssertionError(name + " did not print LISTENING port=" + described, t);
        }
    }

    /** Closes standard input and waits for the clean exit; returns the exit code. */
    int stop() throws Exception {
        jvm.closeStdin();
        return jvm.waitFor(Duration.ofSeconds(60));
    }

    /** The agent's log lines (stderr lines with "ccagent"). */
    List<String> agentLines() {
        return jvm.stderr().lines().filter(l -> l.contains("ccagent")).toList();
    }

    @Override
    public void close() {
        jvm.close();
    }
}
