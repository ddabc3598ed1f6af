package dev.ccagent.agent;

import dev.ccagent.agent.config.AgentArgs;
import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.control.Control;
import dev.ccagent.agent.detect.SpinDetector;
import dev.ccagent.agent.instrument.Installer;
import dev.ccagent.agent.instrument.TargetModule;
import dev.ccagent.agent.jfr.AgentJfr;
import dev.ccagent.agent.log.AgentLog;
import dev.ccagent.agent.runtime.AgentRuntime;
import dev.ccagent.agent.runtime.AgentVersion;
import net.bytebuddy.agent.builder.ResettableClassFileTransformer;

import java.lang.instrument.Instrumentation;
import java.util.List;

/**
 * Entry points: {@code -javaagent:ccagent.jar=ARGS} ({@link #premain}), late attach
 * ({@link #agentmain}) and {@code java -jar ccagent.jar} ({@link #main}).
 *
 * <p>Fail open: a bad argument, an unsupported library or an exception in our own start-up gives
 * one log line per problem and leaves the application with its stock behaviour.
 */
public final class CcAgent {

    private static ResettableClassFileTransformer transformer;
    /** The fixes of the libraries' own bugs: kept by detach, replaced by the next attach ({@link Installer#replaceFixes}). */
    private static Installer.Fixes fixes;
    private static Instrumentation instrumentation;

    private CcAgent() {
    }

    public static void premain(String args, Instrumentation inst) {
        start(args, inst, "start-up");
    }

    public static void agentmain(String args, Instrumentation inst) {
        start(args, inst, "attach");
    }

    public static void main(String[] args) {
        System.exit(dev.ccagent.agent.cli.Cli.run(args, System.out, System.err));
    }

    static synchronized void start(String args, Instrumentation inst, String how) {
        try {
            String refused = AgentJars.refusal();
            if (refused != null) {
                AgentLog.error(refused, null);
                return;
            }
            AgentArgs.Result parsed = AgentArgs.parse(args);
            if (!parsed.ok()) {
                for (String problem : parsed.problems()) {
                    AgentLog.error("bad argument: " + problem + "; congestion control stays stock", null);
                }
                return;
            }
            if (transformer == null) {
                // each attach gets an Instrumentation of its own; a transformer can only be removed through
                // the one it was added to, so a reconfiguring attach keeps the installing one
                instrumentation = inst;
            }
            dev.ccagent.agent.instrument.HelperInjector.init(inst);
            apply(parsed.config(), how);
            // a fresh attach is a new experiment: arms a previous attach rolled back (ArmStats outlive a detach) are re-enabled
            dev.ccagent.agent.measure.Guard.reEnableAll(how);
            Control.register(CcAgent::detach, CcAgent::apply);
            System.setProperty(AgentVersion.ATTACHED_PROPERTY, AgentVersion.VERSION);
        } catch (Throwable t) {
            AgentRuntime.setConfig(null);
            AgentLog.error("failed to start; the application runs with its stock congestion control", t);
        }
    }

    /**
     * Puts a validated configuration in force, the same way on a first start, a {@code set} and a second
     * attach: each subsystem gets it through one {@code apply} of its own, in this order: the log level,
     * the runtime's configuration (read by every hook per connection), JFR (before the instrumentation,
     * so that the modules' applied/skipped events land in the recording), the spin detector, and the
     * instrumentation, which is installed once and then only reads the configuration.
     */
    static synchronized void apply(AgentConfig config, String how) {
        AgentLog.setLevel(config.logLevel());
        boolean installing = transformer == null;
        AgentRuntime.setConfig(config);
        AgentJfr.apply(config, installing ? ("attach".equals(how) ? "attached" : "installed") : "reconfigured",
                installing ? config + "; Java " + Runtime.version() : how + ": " + config);
        applyDetector(config);
        applyInstrumentation(config);
        AgentLog.info(installing ? "installed on " + how + " (" + config + "); Java " + Runtime.version()
                : "reconfigured on " + how + ": " + config);
    }

    /**
     * The instrumentation's part of {@link #apply}: the hooks, the fixes of the libraries' own bugs and
     * the pacing timer are installed by the first configuration; a later one changes nothing here (the
     * hooks read the runtime's configuration).
     */
    private static void applyInstrumentation(AgentConfig config) {
        if (transformer != null) {
            return;
        }
        List<TargetModule> modules = Installer.modules(config);
        transformer = Installer.install(instrumentation, modules);
        try {
            fixes = Installer.replaceFixes(instrumentation, modules, fixes);
        } catch (Throwable t) {
            AgentLog.error("the fixes of the libraries' own bugs were not installed; those classes run as released", t);
        }
        startTimer();
    }

    /**
     * Stops assigning our algorithms to new connections and removes the instrumentation where the JVM
     * allows, except the fixes of the libraries' own bugs ({@code fix.kwik-stream-stall},
     * {@code fix.kwik-loss-timer}), which stay (see {@link dev.ccagent.agent.instrument.TargetModule#extendFixes}).
     */
    public static synchronized void detach() {
        boolean attached = transformer != null;
        AgentRuntime.setConfig(null);
        Installer.keepAfterDetach(fixes); // from now on the kept fixes reach only loaders they applied to
        if (transformer != null && instrumentation != null) {
            try {
                if (!transformer.reset(instrumentation, net.bytebuddy.agent.builder.AgentBuilder.RedefinitionStrategy.RETRANSFORMATION)) {
                    AgentLog.warn("instrumentation could not be removed (the JVM no longer knew its transformer);"
                            + " new connections are stock anyway");
                }
            } catch (RuntimeException e) {
                AgentLog.warn("instrumentation could not be removed; new connections are stock anyway: " + e);
            }
            transformer = null;
        }
        int handedBack = Detach.afterReset();
        int closedOut = 0;
        try {
            // after the hand-back (no new meter can join): every live connection's last summary, arm counts
            // settled, nothing of them held
            closedOut = dev.ccagent.agent.measure.Summaries.detach();
        } catch (Throwable t) {
            AgentLog.warn("detach: live connections not all closed out: " + t);
        }
        try {
            SpinDetector.stop(); // before the recording is written: its last windows land in it
        } catch (Throwable t) {
            AgentLog.error("spin detector shutdown failed", t);
        }
        AgentJfr.detached();
        System.clearProperty(AgentVersion.ATTACHED_PROPERTY);
        AgentLog.info("detached: new connections use the stock congestion control; " + handedBack
                + " existing kwik connection(s) handed to kwik's controller; " + closedOut
                + " measured connection(s) closed out" + (attached ? keptFixes() : ""));
    }

    /**
     * What detach leaves in place: the fixes' transformer, for the loaders it applied to, and the types
     * it holds (read from its listener, so only those it really transformed), also recorded for
     * {@code status}; "" when there is none.
     */
    private static String keptFixes() {
        try {
            if (fixes == null) {
                return "";
            }
            List<String> kept = dev.ccagent.agent.instrument.Transformed.fixes();
            String what = "the fixes of the libraries' own bugs stay " + (kept.isEmpty()
                    ? "for the classes they fix in the loaders where they applied, when those load"
                    : "in " + String.join(", ", kept) + " (and in the classes they fix that those loaders load later)")
                    + "; removing them would reopen those races on live connections";
            AgentRuntime.recordModule("detached: " + what + "; a later attach replaces them");
            return "; " + what;
        } catch (Throwable t) {
            AgentLog.warn("detach: the fixes kept could not be listed: " + t);
            return "";
        }
    }

    /** Starts, reconfigures or stops the send-loop spin detector for a configuration; fails open. */
    private static void applyDetector(AgentConfig config) {
        try {
            SpinDetector.apply(config);
        } catch (Throwable t) {
            AgentLog.error("spin detector not started; congestion control is unaffected", t);
        }
    }

    /**
     * Starts the pacing timer from the agent's own thread at install (not lazily on an application
     * thread, whose class loader it would pin); a failure here is only logged: connections that
     * would need the timer fall back to the stock controller.
     */
    private static void startTimer() {
        try {
            AgentRuntime.startTimer();
        } catch (Throwable t) {
            AgentLog.error("pacing timer not started; paced connections fall back to the stock controller", t);
        }
    }
}
