package dev.ccagent.agent;

import dev.ccagent.agent.config.AgentArgs;
import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.control.Control;
import dev.ccagent.agent.instrument.Installer;
import dev.ccagent.agent.instrument.TargetModule;
import dev.ccagent.agent.jfr.AgentJfr;
import dev.ccagent.agent.log.AgentLog;
import dev.ccagent.agent.runtime.AgentRuntime;
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

    /** System property set in a JVM where the agent runs (read by {@code ccagent list}). */
    public static final String ATTACHED_PROPERTY = "ccagent.version";
    public static final String VERSION = versionOf();

    private static ResettableClassFileTransformer transformer;
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

    private static String versionOf() {
        String v = CcAgent.class.getPackage().getImplementationVersion();
        return v != null ? v : "dev";
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
            instrumentation = inst;
            dev.ccagent.agent.instrument.HelperInjector.init(inst);
            apply(parsed.config(), how);
            // a fresh attach is a new experiment: arms a previous attach rolled back (ArmStats outlive a detach) are re-enabled
            dev.ccagent.agent.measure.Guard.reEnableAll(how);
            Control.register(CcAgent::detach, CcAgent::apply);
            System.setProperty(ATTACHED_PROPERTY, VERSION);
        } catch (Throwable t) {
            AgentRuntime.setConfig(null);
            AgentLog.error("failed to start; the application runs with its stock congestion control", t);
        }
    }

    /** Puts a validated configuration in force: installs the instrumentation once, then only swaps the config. */
    static synchronized void apply(AgentConfig config, String how) {
        AgentLog.setLevel(config.logLevel());
        if (transformer != null) {
            AgentRuntime.setConfig(config);
            AgentLog.info("reconfigured on " + how + ": " + config);
            AgentJfr.reconfigured(config, how);
            return;
        }
        List<TargetModule> modules = Installer.modules(config);
        AgentRuntime.setConfig(config);
        AgentJfr.started(config, how); // before install: module applied/skipped events land in the recording
        transformer = Installer.install(instrumentation, modules);
        startTimer();
        AgentLog.info("installed on " + how + " (" + config + "); Java " + Runtime.version());
    }

    /** Stops assigning our algorithms to new connections and removes the instrumentation where the JVM allows. */
    public static synchronized void detach() {
        dev.ccagent.agent.measure.Summaries.detach(); // a last summary of every live connection
        AgentRuntime.setConfig(null);
        if (transformer != null && instrumentation != null) {
            try {
                transformer.reset(instrumentation, net.bytebuddy.agent.builder.AgentBuilder.RedefinitionStrategy.RETRANSFORMATION);
            } catch (RuntimeException e) {
                AgentLog.warn("instrumentation could not be removed; new connections are stock anyway: " + e);
            }
            transformer = null;
        }
        int handedBack = Detach.afterReset();
        AgentJfr.detached();
        System.clearProperty(ATTACHED_PROPERTY);
        AgentLog.info("detached: new connections use the stock congestion control; " + handedBack
                + " existing kwik connection(s) handed to kwik's controller");
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
