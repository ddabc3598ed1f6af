package dev.ccagent.agent.cli;

import com.sun.tools.attach.VirtualMachine;
import com.sun.tools.attach.VirtualMachineDescriptor;
import dev.ccagent.agent.CcAgent;
import dev.ccagent.agent.config.AgentArgs;
import dev.ccagent.agent.control.ControlMXBean;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;

/**
 * {@code java -jar ccagent.jar COMMAND}: the operator's tool. Exit status 0 on success, 1 when the
 * command failed, 2 on bad usage.
 */
@Command(name = "ccagent", mixinStandardHelpOptions = true, versionProvider = Cli.Version.class,
        description = "Congestion control for running Java QUIC servers: attach, inspect, change, detach.",
        subcommands = {Cli.ListCommand.class, Cli.AttachCommand.class, Cli.StatusCommand.class, Cli.SetCommand.class,
            Cli.DetachCommand.class, Cli.ReportCommand.class, Cli.DemoCommand.class, CommandLine.HelpCommand.class})
public final class Cli implements Callable<Integer> {

    static final List<String> NEEDS_ATTACH = List.of("list", "attach", "status", "set", "detach");
    static final String NO_ATTACH_MODULE = "this Java runtime has no jdk.attach module (a JRE or a jlink image "
            + "without it): run ccagent with a full JDK";

    static PrintWriter out;
    static PrintWriter err;

    /** Runs a command line; returns the exit status. */
    public static int run(String[] args, PrintStream stdout, PrintStream stderr) {
        out = new PrintWriter(stdout, true);
        err = new PrintWriter(stderr, true);
        if (args.length > 0 && NEEDS_ATTACH.contains(args[0]) && !List.of(args).contains("--help")
                && ModuleLayer.boot().findModule("jdk.attach").isEmpty()) {
            // checked before any class that links against com.sun.tools.attach is loaded
            err.println("ccagent: " + NO_ATTACH_MODULE);
            return 1;
        }
        CommandLine cl = new CommandLine(new Cli());
        cl.setOut(out);
        cl.setErr(err);
        cl.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            if (e instanceof CliException) {
                err.println("ccagent: " + e.getMessage());
                return ((CliException) e).exitCode;
            }
            err.println("ccagent: " + e);
            return 1;
        });
        int status = cl.execute(args);
        // print() does not flush an autoflush PrintWriter: without this, `report`'s text was lost at exit
        out.flush();
        err.flush();
        return status;
    }

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        spec.commandLine().usage(err);
        return 2;
    }

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"ccagent " + CcAgent.VERSION + " on Java " + Runtime.version()};
        }
    }

    @Command(name = "list", mixinStandardHelpOptions = true,
            description = "Running JVMs, marking those with a supported QUIC library on the class path and those running ccagent.")
    static final class ListCommand implements Callable<Integer> {
        @Override
        public Integer call() {
            String self = Long.toString(ProcessHandle.current().pid());
            out.printf("%-8s %-7s %-10s %s%n", "PID", "AGENT", "QUIC", "MAIN");
            for (VirtualMachineDescriptor d : VirtualMachine.list()) {
                if (d.id().equals(self)) {
                    continue;
                }
                String agent = "?";
                String quic = "?";
                try (TargetJvm t = TargetJvm.attach(d.id())) {
                    Properties p = t.systemProperties();
                    agent = p.getProperty(CcAgent.ATTACHED_PROPERTY) != null ? "yes" : "no";
                    quic = quicLibraries(p.getProperty("java.class.path", ""));
                } catch (CliException e) {
                    // another user's JVM or one that went away: shown with '?'
                }
                out.printf("%-8s %-7s %-10s %s%n", d.id(), agent, quic, d.displayName());
            }
            return 0;
        }

        static String quicLibraries(String classPath) {
            StringBuilder sb = new StringBuilder();
            if (classPath.contains("kwik")) {
                sb.append("kwik");
            }
            if (classPath.contains("codec-classes-quic") || classPath.contains("codec-quic")) {
                sb.append(sb.length() > 0 ? "," : "").append("netty");
            }
            return sb.length() > 0 ? sb.toString() : "-";
        }
    }

    @Command(name = "attach", mixinStandardHelpOptions = true,
            description = "Load ccagent into a running JVM (a second attach reconfigures) and show what it applied.")
    static final class AttachCommand implements Callable<Integer> {
        @Parameters(index = "0", description = "process id")
        String pid;

        @Parameters(index = "1", arity = "0..1", defaultValue = "",
                description = "agent arguments, e.g. 'cc=bbr1;canary=bbr3:10%%'")
        String args;

        @Override
        public Integer call() {
            AgentArgs.Result parsed = AgentArgs.parse(args);
            if (!parsed.ok()) {
                parsed.problems().forEach(p -> err.println("ccagent: " + p));
                return 2;
            }
            try (TargetJvm t = TargetJvm.attach(pid)) {
                boolean again = t.hasAgent();
                t.loadAgent(args);
                out.println((again ? "reconfigured" : "attached") + " ccagent to pid " + pid);
                printStatus(t.control());
            }
            return 0;
        }
    }

    @Command(name = "status", mixinStandardHelpOptions = true,
            description = "Configuration, connections per algorithm and alarms of the agent in a JVM.")
    static final class StatusCommand implements Callable<Integer> {
        @Parameters(index = "0", description = "process id")
        String pid;

        @Override
        public Integer call() {
            try (TargetJvm t = TargetJvm.attach(pid)) {
                printStatus(t.control());
            }
            return 0;
        }
    }

    @Command(name = "set", mixinStandardHelpOptions = true,
            description = "Change the configuration for new connections, e.g. set PID cc=bbr1 canary=bbr3:50%%.")
    static final class SetCommand implements Callable<Integer> {
        @Parameters(index = "0", description = "process id")
        String pid;

        @Parameters(index = "1..*", arity = "1..*", description = "KEY=VALUE entries")
        List<String> entries;

        @Override
        public Integer call() {
            String joined = String.join(";", entries);
            AgentArgs.Result split = AgentArgs.parseEntries(joined);
            if (!split.problems().isEmpty()) {
                split.problems().forEach(p -> err.println("ccagent: " + p));
                return 2;
            }
            try (TargetJvm t = TargetJvm.attach(pid)) {
                ControlMXBean control = t.control();
                try {
                    String now = control.set(joined);
                    out.println("configuration of pid " + pid + " for new connections: " + now);
                } catch (RuntimeException e) {
                    String message = rootMessage(e);
                    for (String line : message.split("\n")) {
                        err.println("ccagent: " + line);
                    }
                    return 2;
                }
            }
            return 0;
        }
    }

    @Command(name = "detach", mixinStandardHelpOptions = true,
            description = "New connections get the stock algorithm again; instrumentation is removed where the JVM allows.")
    static final class DetachCommand implements Callable<Integer> {
        @Parameters(index = "0", description = "process id")
        String pid;

        @Override
        public Integer call() {
            try (TargetJvm t = TargetJvm.attach(pid)) {
                t.control().detach();
                out.println("detached ccagent from pid " + pid + ": new connections use the stock algorithm");
            }
            return 0;
        }
    }

    @Command(name = "report", mixinStandardHelpOptions = true,
            description = "Summarise a JFR recording per canary arm: connections, goodput, RTT, loss, modes, alarms.")
    static final class ReportCommand implements Callable<Integer> {
        @Parameters(index = "0", description = "the .jfr file")
        java.nio.file.Path recording;

        @CommandLine.Option(names = "--html", paramLabel = "FILE", description = "also write a self-contained HTML page with charts")
        java.nio.file.Path html;

        @Override
        public Integer call() {
            dev.ccagent.agent.report.RecordingReport report;
            try {
                report = dev.ccagent.agent.report.RecordingReport.read(recording);
            } catch (java.io.IOException e) {
                throw new CliException(1, e.getMessage());
            }
            out.print(report.text());
            if (html != null) {
                try {
                    dev.ccagent.agent.report.HtmlReport.write(report, html);
                    out.println("HTML report: " + html.toAbsolutePath());
                } catch (java.io.IOException | RuntimeException e) {
                    throw new CliException(1, "cannot write " + html + ": " + e.getMessage());
                }
            }
            if (report.problem() != null) {
                err.println("ccagent: " + report.problem());
                return 1;
            }
            return 0;
        }
    }

    @Command(name = "demo", mixinStandardHelpOptions = true,
            description = {"Run kwik downloads through the link emulator on 127.0.0.1 with stock NewReno, with BBR "
                + "injected by the agent and with a canary split; print them side by side and write JFR recordings "
                + "and an HTML report. Needs the build tree this jar was built in (integration-tests/target).",
                "Defaults: 20 Mbit/s, 50 ms RTT, 1% loss (server -> client), 1-BDP buffer, 4 MB per download."})
    static final class DemoCommand implements Callable<Integer> {
        static final String MAIN = "dev.ccagent.it.demo.Demo";
        static final String HINT = "run mvn -B -q install -DskipTests first";

        @CommandLine.Option(names = "--rate", paramLabel = "RATE", description = "bottleneck rate (default 20mbit)")
        String rate;
        @CommandLine.Option(names = "--rtt", paramLabel = "T", description = "base round-trip time (default 50ms)")
        String rtt;
        @CommandLine.Option(names = "--loss", paramLabel = "P", description = "random loss on the data direction (default 0.01)")
        String loss;
        @CommandLine.Option(names = "--buffer", paramLabel = "SIZE|Nbdp", description = "drop-tail buffer per direction (default 1bdp)")
        String buffer;
        @CommandLine.Option(names = "--bytes", paramLabel = "SIZE", description = "bytes of the stock and BBR downloads (default 4MB)")
        String bytes;
        @CommandLine.Option(names = "--cc", paramLabel = "ALGO", description = "algorithm the agent injects (default bbr1)")
        String cc;
        @CommandLine.Option(names = "--canary", paramLabel = "ALGO:PCT%%", description = "canary split of the third run (default bbr1:50%%)")
        String canary;
        @CommandLine.Option(names = "--canary-connections", paramLabel = "N", description = "downloads at once in the canary run (default 6; 0 skips it)")
        String canaryConnections;
        @CommandLine.Option(names = "--canary-bytes", paramLabel = "SIZE", description = "bytes per canary download (default 2MB)")
        String canaryBytes;
        @CommandLine.Option(names = "--seed", paramLabel = "N", description = "emulator seed (default 1)")
        String seed;
        @CommandLine.Option(names = "--out", paramLabel = "DIR", description = "where recordings and reports go (default ./ccagent-demo-TIMESTAMP)")
        String outDir;
        @CommandLine.Option(names = "--quick", description = "small transfers (1.5 MB; canary 4 x 0.6 MB): a fast check")
        boolean quick;

        @Override
        public Integer call() throws Exception {
            java.nio.file.Path jar = ownJar();
            java.nio.file.Path root = jar.getParent().getParent().getParent();
            java.nio.file.Path classes = root.resolve("integration-tests/target/classes");
            java.nio.file.Path cpFile = root.resolve("integration-tests/target/classpath.txt");
            if (!java.nio.file.Files.isRegularFile(classes.resolve(MAIN.replace('.', '/') + ".class"))
                    || !java.nio.file.Files.isRegularFile(cpFile)) {
                throw new CliException(1, "the demo needs the build tree of this jar (" + classes + " and " + cpFile
                        + "): " + HINT);
            }
            String cp = classes + java.io.File.pathSeparator + java.nio.file.Files.readString(cpFile).strip()
                    + java.io.File.pathSeparator + jar;
            List<String> cmd = new java.util.ArrayList<>();
            cmd.add(java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString());
            cmd.add("-Xmx512m");
            cmd.add("-cp");
            cmd.add(cp);
            cmd.add(MAIN);
            cmd.add("--agent-jar");
            cmd.add(jar.toString());
            forward(cmd, "--rate", rate);
            forward(cmd, "--rtt", rtt);
            forward(cmd, "--loss", loss);
            forward(cmd, "--buffer", buffer);
            forward(cmd, "--bytes", bytes);
            forward(cmd, "--cc", cc);
            forward(cmd, "--canary", canary);
            forward(cmd, "--canary-connections", canaryConnections);
            forward(cmd, "--canary-bytes", canaryBytes);
            forward(cmd, "--seed", seed);
            forward(cmd, "--out", outDir);
            if (quick) {
                cmd.add("--quick");
            }
            out.flush();
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

        private static void forward(List<String> cmd, String flag, String value) {
            if (value != null) {
                cmd.add(flag);
                cmd.add(value);
            }
        }

        /** This jar: agent/target/ccagent.jar of a build tree (system property ccagent.jar overrides, for tests). */
        static java.nio.file.Path ownJar() {
            String override = System.getProperty("ccagent.jar");
            java.nio.file.Path jar;
            if (override != null) {
                jar = java.nio.file.Path.of(override);
            } else {
                try {
                    jar = java.nio.file.Path.of(Cli.class.getProtectionDomain().getCodeSource().getLocation().toURI());
                } catch (java.net.URISyntaxException | RuntimeException e) {
                    throw new CliException(1, "cannot tell where ccagent.jar is: " + e.getMessage());
                }
            }
            jar = jar.toAbsolutePath().normalize();
            if (!java.nio.file.Files.isRegularFile(jar) || jar.getParent() == null || jar.getParent().getParent() == null
                    || jar.getParent().getParent().getParent() == null) {
                throw new CliException(1, "the demo runs from agent/target/ccagent.jar inside the build tree, not from "
                        + jar + ": " + HINT);
            }
            return jar;
        }
    }

    static void printStatus(ControlMXBean c) {
        out.println("active:        " + c.isActive());
        out.println("configuration: " + (c.getConfiguration().isEmpty() ? "(none)" : c.getConfiguration()));
        out.println("default:       " + c.getDefaultAlgorithm());
        out.println("canary:        " + (c.getCanarySplit().isEmpty() ? "(none)" : c.getCanarySplit()));
        out.println("fallbacks:     " + c.getFallbacks());
        out.println("modules:");
        for (String m : c.getModules()) {
            out.println("  " + m);
        }
        out.println("connections:");
        for (Map.Entry<String, Long> e : c.getConnectionCounts().entrySet()) {
            out.println("  " + e.getKey() + " " + e.getValue());
        }
        out.println("arms:");
        for (String a : c.getArms()) {
            out.println("  " + a);
        }
        String[] alarms = c.getAlarms();
        out.println("alarms:        " + (alarms.length == 0 ? "none" : ""));
        for (String a : alarms) {
            out.println("  " + a);
        }
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getMessage() != null ? t.getMessage() : t.toString();
    }
}
