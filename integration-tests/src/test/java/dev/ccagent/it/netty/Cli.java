package dev.ccagent.it.netty;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** The operator CLI ({@code java -jar ccagent.jar ARGS}) in its own process, its output kept in {@code dir}. */
final class Cli {

    /** The outcome of one CLI run. */
    record Result(int exit, String out, String err) {
        String all() {
            return out + err;
        }
    }

    private Cli() {
    }

    static Result run(Path dir, String name, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElse("java"));
        cmd.add("-jar");
        cmd.add(PackagedServer.agentJar().toString());
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
