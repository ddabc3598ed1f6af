package dev.ccagent.agent.cli;

import dev.ccagent.agent.runtime.AgentVersion;
import com.sun.tools.attach.VirtualMachine;
import com.sun.tools.attach.VirtualMachineDescriptor;
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
            return new String[] {"ccagent " + AgentVersion.VERSION + " on Java " + Runtime.version()};
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
                    agent = p.getProperty(AgentVersion.ATTACHED_PROPERTY) != null ? "yes" : "no";
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

    /** A command on one JVM, named by its process id (picocli reads the parameter from this superclass). */
    abstract static class PidCommand implements Callable<Integer> {
        @Parameters(index = "0", description = "process id")
        String pid;

        /** The command's arguments checked before attaching: an exit status to stop with, or 0 to attach. */
        int check() {
            return 0;
        }

        /** The command's work in the attached JVM; its exit status. */
        abstract int inTarget(TargetJvm t);

        @Override
        public Integer call() {
            int refused = check();
            if (refused != 0) {
                return refused;
            }
            try (TargetJvm t = TargetJvm.attach(pid)) {
                return inTarget(t);
            }
        }

        /** Prints each problem of {@code parsed}, if any, as {@code ccagent: PROBLEM}: 2 when there is one, else 0. */
        static int refuseProblems(AgentArgs.Result parsed) {
            parsed.problems().forEach(p -> err.println("ccagent: " + p));
            return parsed.problems().isEmpty() ? 0 : 2;
        }
    }

    @Command(name = "attach", mixinStandardHelpOptions = true,
            description = "Load ccagent into a running JVM (a second attach reconfigures) and show what it applied.")
    static final class AttachCommand extends PidCommand {
        @Parameters(index = "1", arity = "0..1", defaultValue = "",
                description = "agent arguments, e.g. 'cc=bbr1;canary=bbr3:10%%'")
        String args;

        @Override
        int check() {
            return refuseProblems(AgentArgs.parse(args));
        }

        @Override
        int inTarget(TargetJvm t) {
            boolean again = t.hasAgent();
            t.loadAgent(args);
            out.println((again ? "reconfigured" : "attached") + " ccagent to pid " + pid);
            printStatus(t.control());
            return 0;
        }
    }

    @Command(name = "status", mixinStandardHelpOptions = true,
            description = "Configuration, connections per algorithm and alarms of the agent in a JVM.")
    static final class StatusCommand extends PidCommand {
        @Override
        int inTarget(TargetJvm t) {
            printStatus(t.control());
            return 0;
        }
    }

    @Command(name = "set", mixinStandardHelpOptions = true,
            description = "Change the configuration for new connections, e.g. set PID cc=bbr1 canary=bbr3:50%%.")
    static final class SetCommand extends PidCommand {
        @Parameters(index = "1..*", arity = "1..*", description = "KEY=VALUE entries")
        List<String> entries;

        @Override
        int check() {
            return refuseProblems(AgentArgs.parseEntries(String.join(";", entries)));
        }

        @Override
        int inTarget(TargetJvm t) {
            ControlMXBean control = t.control();
            try {
                String now = control.set(String.join(";", entries));
                out.println("configuration of pid " + pid + " for new connections: " + now);
            } catch (RuntimeException e) {
                String message = rootMessage(e);
                for (String line : message.split("\n")) {
                    err.println("ccagent: " + line);
                }
                return 2;
            }
            return 0;
        }
    }

    @Command(name = "detach", mixinStandardHelpOptions = true,
            description = "New connections get the stock algorithm again; instrumentation is removed where the JVM allows.")
    static final class DetachCommand extends PidCommand {
        @Override
        int inTarget(TargetJvm t) {
            t.control().detach();
            out.println("detached ccagent from pid " + pid + ": new connections use the stock algorithm");
            return 0;
        }
    }

    @Command(name = "report", mixinStandardHelpOptions = true,
            description = {"Canary report over JFR recordings of one JVM or a fleet: merges every FILE and every *.jfr "
                + "under each DIR per arm (the same recording given twice is read once), and compares each canary arm "
                + "with the baseline arm: ratio of medians with a 95%% bootstrap CI, Mann-Whitney p-value and a verdict "
                + "per metric (goodput, RTT, loss). See docs/report.md.",
                "Exit status: 0 every input read whole; 1 some input was missing, empty, truncated, not a recording "
                + "or without ccagent events (one line each on stderr; the report covers the rest), or no connection "
                + "was found; 2 bad usage."})
    static final class ReportCommand implements Callable<Integer> {
        @Parameters(index = "0..*", arity = "1..*", paramLabel = "FILE|DIR", description = "recordings (.jfr) or directories of them")
        List<java.nio.file.Path> recordings;

        @CommandLine.Option(names = "--html", paramLabel = "FILE", description = "also write a self-contained HTML page with the verdicts and charts")
        java.nio.file.Path html;

        @CommandLine.Option(names = "--json", description = "print the report as one JSON object (schema ccagent-report/1, docs/report.md) instead of text")
        boolean json;

        @CommandLine.Option(names = "--baseline", paramLabel = "ARM", description = "baseline arm, by name ('default stock') or label ('default'); default: the arm labelled 'default'")
        String baseline;

        @CommandLine.Option(names = "--seed", paramLabel = "N", defaultValue = "1", description = "seed of the bootstrap (default 1): the same seed gives the same intervals")
        long seed;

        /** Runs the report module nested in ccagent.jar (never loaded by a server) with the parsed options. */
        @Override
        public Integer call() {
            List<String> args = new java.util.ArrayList<>(List.of("--seed", Long.toString(seed)));
            if (baseline != null) {
                args.addAll(List.of("--baseline", baseline));
            }
            if (json) {
                args.add("--json");
            }
            if (html != null) {
                args.addAll(List.of("--html", html.toString()));
            }
            args.add("--");
            recordings.forEach(r -> args.add(r.toString()));
            return ReportJar.run(args.toArray(new String[0]), out, err);
        }
    }

    @Command(name = "demo", mixinStandardHelpOptions = true,
            description = {"The demo is not part of ccagent.jar (the production jar runs no code from outside itself).",
                "In the repository: mvn -B -q package -DskipTests && java -jar integration-tests/target/ccagent-demo.jar"})
    static final class DemoCommand implements Callable<Integer> {
        static final String WHERE = "the demo is its own artifact now; in the repository run: "
                + "mvn -B -q package -DskipTests && java -jar tools/target/ccagent-demo.jar (see README)";

        @CommandLine.Unmatched
        List<String> ignored;

        @Override
        public Integer call() {
            err.println("ccagent: " + WHERE);
            return 2;
        }
    }

    static void printStatus(ControlMXBean c) {
        out.println("active:        " + c.isActive());
        out.println("configuration: " + (c.getConfiguration().isEmpty() ? "(none)" : c.getConfiguration()));
        out.println("default:       " + c.getDefaultAlgorithm());
        out.println("canary:        " + (c.getCanarySplit().isEmpty() ? "(none)" : c.getCanarySplit()));
        out.println("fallbacks:     " + c.getFallbacks());
        try {
            for (String f : c.getFallbackCauses()) {
                out.println("  " + f);
            }
        } catch (RuntimeException e) { // an agent from before this attribute
            out.println("  (causes not reported by this agent)");
        }
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
        String[] spins;
        try {
            spins = c.getOngoingSpins();
        } catch (RuntimeException e) { // an agent from before this attribute
            out.println("spins ongoing: (not reported by this agent)");
            return;
        }
        out.println("spins ongoing: " + (spins.length == 0 ? "none" : ""));
        for (String s : spins) {
            out.println("  " + s);
        }
        long stalls;
        String[] open;
        try {
            stalls = c.getStreamStalls();
            open = c.getOngoingStreamStalls();
        } catch (RuntimeException e) { // an agent from before these attributes
            out.println("stream stalls: (not reported by this agent)");
            return;
        }
        out.println("stream stalls: " + stalls + " (ongoing " + open.length + ")");
        for (String s : open) {
            out.println("  " + s);
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
