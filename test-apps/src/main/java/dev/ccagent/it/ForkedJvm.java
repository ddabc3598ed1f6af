package dev.ccagent.it;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A child JVM for tests and benchmarks: a main class on a given class path, optionally with
 * {@code -javaagent:JAR=ARGS}, stdout and stderr captured to files under a work directory.
 * {@link #close()} always destroys the process and its descendants (use try-with-resources).
 */
public final class ForkedJvm implements AutoCloseable {

    private final String name;
    private final Process process;
    private final Path stdout;
    private final Path stderr;
    private final OutputStream stdin;

    private ForkedJvm(String name, Process process, Path stdout, Path stderr) {
        this.name = name;
        this.process = process;
        this.stdout = stdout;
        this.stderr = stderr;
        this.stdin = process.getOutputStream();
    }

    public static Builder builder(String name, String mainClass) {
        return new Builder(name, mainClass);
    }

    /** Options of a child JVM. */
    public static final class Builder {
        private final String name;
        private final String mainClass;
        private String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        private String classPath = System.getProperty("java.class.path");
        private final List<String> jvmArgs = new ArrayList<>();
        private final List<String> args = new ArrayList<>();
        private Path dir = Path.of(System.getProperty("java.io.tmpdir"));
        private Path executableJar;

        private Builder(String name, String mainClass) {
            this.name = name;
            this.mainClass = mainClass;
        }

        /** The java launcher (default: the running JVM's). */
        public Builder java(String launcher) {
            this.java = launcher;
            return this;
        }

        public Builder classPath(String cp) {
            this.classPath = cp;
            return this;
        }

        /** Adds {@code -javaagent:<absolute jar>[=args]}. */
        public Builder javaagent(Path jar, String agentArgs) {
            String a = "-javaagent:" + jar.toAbsolutePath();
            jvmArgs.add(agentArgs == null || agentArgs.isEmpty() ? a : a + "=" + agentArgs);
            return this;
        }

        public Builder jvmArgs(String... a) {
            jvmArgs.addAll(List.of(a));
            return this;
        }

        public Builder args(String... a) {
            args.addAll(List.of(a));
            return this;
        }

        public Builder args(List<String> a) {
            args.addAll(a);
            return this;
        }

        /** Runs {@code java -jar JAR} (its manifest names the main class; class path and main class are ignored). */
        public Builder executableJar(Path jar) {
            this.executableJar = jar.toAbsolutePath();
            return this;
        }

        /** Where {@code NAME.out} and {@code NAME.err} go. */
        public Builder dir(Path d) {
            this.dir = d;
            return this;
        }

        public ForkedJvm start() throws IOException {
            Files.createDirectories(dir);
            Path out = dir.resolve(name + ".out");
            Path err = dir.resolve(name + ".err");
            List<String> cmd = new ArrayList<>();
            cmd.add(java);
            cmd.addAll(jvmArgs);
            if (executableJar != null) {
                cmd.add("-jar");
                cmd.add(executableJar.toString());
            } else {
                cmd.add("-cp");
                cmd.add(classPath);
                cmd.add(mainClass);
            }
            cmd.addAll(args);
            Files.writeString(dir.resolve(name + ".cmd"), String.join(" ", cmd) + "\n");
            ProcessBuilder pb = new ProcessBuilder(cmd)
                    .redirectOutput(out.toFile())
                    .redirectError(err.toFile());
            return new ForkedJvm(name, pb.start(), out, err);
        }
    }

    public String name() {
        return name;
    }

    /** Runs the JDK's {@code jcmd PID ARGS...} (the one beside the running java) and returns its output. */
    public static String jcmd(long pid, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString());
        cmd.add(Long.toString(pid));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException("jcmd " + String.join(" ", args) + " did not finish");
        }
        return out;
    }

    public long pid() {
        return process.pid();
    }

    public Process process() {
        return process;
    }

    public String stdout() {
        return read(stdout);
    }

    public String stderr() {
        return read(stderr);
    }

    public Path stdoutFile() {
        return stdout;
    }

    public Path stderrFile() {
        return stderr;
    }

    /** The process's CPU time so far (all threads), if the OS tells. */
    public Optional<Duration> cpuTime() {
        return process.toHandle().info().totalCpuDuration();
    }

    /**
     * Waits until a stdout line matches {@code pattern}; returns the match. Throws when the process
     * exits first or the timeout passes (with the tails of stdout and stderr in the message).
     */
    public Matcher awaitLine(Pattern pattern, Duration timeout) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            boolean alive = process.isAlive();
            for (String line : stdout().split("\n")) {
                Matcher m = pattern.matcher(line);
                if (m.find()) {
                    return m;
                }
            }
            if (!alive) {
                throw new IOException(name + " exited with " + process.exitValue() + " before printing /" + pattern
                        + "/" + describe());
            }
            if (System.nanoTime() > deadline) {
                throw new IOException(name + " did not print /" + pattern + "/ within " + timeout + describe());
            }
            Thread.sleep(50);
        }
    }

    /**
     * Waits until {@code text} appears in stdout or stderr (the agent logs to stderr); returns
     * {@link System#nanoTime()} at that moment, or -1 when the timeout passes first.
     */
    public long awaitOutput(String text, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (stdout().contains(text) || stderr().contains(text)) {
                return System.nanoTime();
            }
            Thread.sleep(50);
        }
        return -1;
    }

    /** Waits for the exit; returns the status, or throws (after killing it) when the timeout passes. */
    public int waitFor(Duration timeout) throws IOException, InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            close();
            throw new IOException(name + " still running after " + timeout + "; killed" + describe());
        }
        return process.exitValue();
    }

    /** Closes the child's stdin (servers in this module exit on it). */
    public void closeStdin() {
        try {
            stdin.close();
        } catch (IOException ignored) {
            // already gone
        }
    }

    /** Tails of the outputs, for failure messages. */
    public String describe() {
        return "\n--- " + name + " stdout (tail) ---\n" + tail(stdout()) + "\n--- " + name + " stderr (tail) ---\n"
                + tail(stderr());
    }

    @Override
    public void close() {
        closeStdin();
        List<ProcessHandle> tree = new ArrayList<>();
        process.descendants().forEach(tree::add);
        tree.add(process.toHandle());
        for (ProcessHandle h : tree) {
            h.destroy();
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        for (ProcessHandle h : tree) {
            long left = deadline - System.nanoTime();
            try {
                if (left > 0) {
                    h.onExit().get(left, TimeUnit.NANOSECONDS);
                }
            } catch (Exception ignored) {
                // forced below
            }
            if (h.isAlive()) {
                h.destroyForcibly();
            }
        }
        try {
            process.waitFor(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static String read(Path p) {
        try {
            return Files.exists(p) ? Files.readString(p, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            return "";
        }
    }

    /** The last 40 lines of {@code s}, for a failure's message. */
    public static String tail(String s) {
        String[] lines = s.split("\n");
        int from = Math.max(0, lines.length - 40);
        return String.join("\n", java.util.Arrays.asList(lines).subList(from, lines.length));
    }

    /** Class path entries of {@code classPath} for which {@code keep} holds, joined again. */
    public static String filterClassPath(String classPath, java.util.function.Predicate<String> keep) {
        List<String> out = new ArrayList<>();
        for (String e : classPath.split(File.pathSeparator)) {
            if (!e.isEmpty() && keep.test(e)) {
                out.add(e);
            }
        }
        return String.join(File.pathSeparator, out);
    }
}
