package dev.ccagent.it;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** The operator CLI ({@code java -jar ccagent.jar ARGS}) in its own process, its output kept in a directory. */
public final class AgentCli {

    /** The outcome of one CLI run. */
    public record Result(int exit, String out, String err) {
        public String all() {
            return out + err;
        }
    }

    private AgentCli() {
    }

    /** This JVM's own launcher ({@code java} where it is not known). */
    public static String currentJava() {
        return ProcessHandle.current().info().command().orElse("java");
    }

    /**
     * Runs {@code java javaOptions -jar agentJar args} to its end (at most 120 s), its output in {@code dir} as
     * {@code name.out} and {@code name.err}.
     */
    public static Result run(Path agentJar, String java, List<String> javaOptions, Path dir, String name,
                             String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(java);
        cmd.addAll(javaOptions);
        cmd.add("-jar");
        cmd.add(agentJar.toString());
        cmd.addAll(List.of(args));
        Path out = dir.resolve(name + ".out");
        Path err = dir.resolve(name + ".err");
        Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        try {
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                throw new AssertionError("ccagent " + String.join(" ", args) + " did not finish");
            }
            return new Result(p.exitValue(), Files.readString(out), Files.readString(err));
        } finally {
            p.destroyForcibly();
        }
    }
}
