package dev.ccagent.it.demo;

import dev.ccagent.it.BuildTree;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The main class of {@code tools/target/ccagent-demo.jar}: the demo's own runnable
 * artifact (the production {@code ccagent.jar} runs no code from outside itself). It finds the build
 * tree it was built in ({@code <root>/tools/target/ccagent-demo.jar}), the agent jar of
 * that tree ({@code <root>/agent/target/ccagent.jar}, or {@code --agent-jar PATH}), and runs
 * {@link Demo} in a JVM of its own with the tree's test applications, passing every other flag on.
 * Needs only {@code mvn -B -q package -DskipTests} (no install).
 */
public final class DemoLauncher {

    private DemoLauncher() {
    }

    public static void main(String[] args) throws Exception {
        System.exit(run(args));
    }

    static int run(String[] args) throws Exception {
        Path agentJar = null;
        List<String> rest = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--agent-jar") && i + 1 < args.length) {
                agentJar = Path.of(args[++i]);
            } else {
                rest.add(args[i]);
            }
        }
        BuildTree tree;
        try {
            if (agentJar == null) {
                Path root = ownRoot();
                agentJar = root.resolve("agent/target/ccagent.jar");
            }
            tree = BuildTree.of(agentJar);
        } catch (IOException e) {
            System.err.println("ccagent demo: " + e.getMessage());
            return 1;
        }
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx512m");
        cmd.add("-cp");
        cmd.add(tree.fullClassPath() + File.pathSeparator + tree.agentJar());
        cmd.add(Demo.class.getName());
        cmd.add("--agent-jar");
        cmd.add(tree.agentJar().toString());
        cmd.addAll(rest);
        Process p = new ProcessBuilder(cmd).inheritIO().start();
        Thread stop = new Thread(() -> {
            p.descendants().forEach(ProcessHandle::destroy);
            p.destroy();
        }, "ccagent-demo-stop");
        Runtime.getRuntime().addShutdownHook(stop);
        int status = p.waitFor();
        try {
            Runtime.getRuntime().removeShutdownHook(stop);
        } catch (IllegalStateException shuttingDown) {
            // the hook runs anyway
        }
        return status;
    }

    /** The repository root: three levels above this class's jar (or classes directory). */
    static Path ownRoot() throws IOException {
        Path here;
        try {
            here = Path.of(DemoLauncher.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (java.net.URISyntaxException | RuntimeException e) {
            throw new IOException("cannot tell where the demo jar is: " + e.getMessage());
        }
        here = here.toAbsolutePath().normalize();
        Path root = here.getParent() != null && here.getParent().getParent() != null
                ? here.getParent().getParent().getParent() : null;
        if (root == null || !Files.isDirectory(root.resolve("agent"))) {
            throw new IOException("the demo runs from tools/target/ccagent-demo.jar inside the build tree"
                    + " (or pass --agent-jar PATH), not from " + here + ": " + BuildTree.HINT);
        }
        return root;
    }
}
