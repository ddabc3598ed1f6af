package dev.ccagent.agent.control;

import dev.ccagent.agent.config.AgentArgs;
import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.log.AgentLog;
import dev.ccagent.agent.runtime.AgentRuntime;

import javax.management.InstanceAlreadyExistsException;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** The {@link ControlMXBean} implementation. */
public final class Control implements ControlMXBean {

    public static final String OBJECT_NAME = "dev.ccagent:type=Control";

    /** What detach does (the agent entry point owns the instrumentation). */
    public interface Detacher {
        void detach();
    }

    /** What a successful {@link #set} does with the new configuration (the agent entry point installs it). */
    public interface Reconfigurer {
        void apply(AgentConfig config, String how);
    }

    private final Detacher detacher;
    private final Reconfigurer reconfigurer;

    private Control(Detacher detacher, Reconfigurer reconfigurer) {
        this.detacher = detacher;
        this.reconfigurer = reconfigurer;
    }

    /** Registers the MXBean once per JVM; later calls keep the first registration. */
    public static void register(Detacher detacher, Reconfigurer reconfigurer) {
        detached = false; // (re)started: set works again (no LOCK here: the caller holds CcAgent's monitor)
        try {
            MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            ObjectName name = new ObjectName(OBJECT_NAME);
            if (!server.isRegistered(name)) {
                server.registerMBean(new Control(detacher, reconfigurer), name);
            }
        } catch (InstanceAlreadyExistsException e) {
            // registered by an earlier attach: fine
        } catch (Exception | LinkageError e) {
            AgentLog.warn("management interface " + OBJECT_NAME + " not registered: " + e);
        }
    }

    @Override
    public String getConfiguration() {
        AgentConfig c = AgentRuntime.config();
        if (c == null) {
            return "";
        }
        return c.raw().entrySet().stream()
                .map(e -> e.getKey() + "=" + (AgentArgs.SECRET_KEYS.contains(e.getKey()) ? "(hidden)" : e.getValue()))
                .collect(Collectors.joining(";"));
    }

    @Override
    public String getDefaultAlgorithm() {
        AgentConfig c = AgentRuntime.config();
        return c == null ? AgentConfig.STOCK : c.defaultArm().algorithm();
    }

    @Override
    public String getCanarySplit() {
        AgentConfig c = AgentRuntime.config();
        if (c == null) {
            return "";
        }
        return c.canaryArms().stream().map(a -> a.algorithm() + ":" + trim(a.percent()) + "%")
                .collect(Collectors.joining(","));
    }

    @Override
    public Map<String, Long> getConnectionCounts() {
        return AgentRuntime.connectionCounts();
    }

    @Override
    public long getFallbacks() {
        return AgentRuntime.fallbacks();
    }

    @Override
    public String[] getFallbackCauses() {
        return dev.ccagent.agent.runtime.FallbackLog.causes().toArray(new String[0]);
    }

    @Override
    public String[] getModules() {
        return AgentRuntime.moduleVerdicts().toArray(new String[0]);
    }

    @Override
    public String[] getAlarms() {
        return AgentRuntime.alarms().toArray(new String[0]);
    }

    @Override
    public String[] getOngoingSpins() {
        return dev.ccagent.agent.detect.CpuSpinMonitor.openEpisodes().toArray(new String[0]);
    }

    @Override
    public long getStreamStalls() {
        return dev.ccagent.agent.detect.StreamStallMonitor.episodes();
    }

    @Override
    public String[] getOngoingStreamStalls() {
        return dev.ccagent.agent.detect.StreamStallMonitor.openEpisodes().toArray(new String[0]);
    }

    @Override
    public String[] getArms() {
        return dev.ccagent.agent.measure.ArmStats.all().values().stream()
                .map(dev.ccagent.agent.measure.ArmStats::describe).toArray(String[]::new);
    }

    @Override
    public boolean isActive() {
        return AgentRuntime.config() != null;
    }

    /**
     * Keys {@link #set} refuses: those that name files (a JMX client must not make the agent read or
     * write a file the operator did not name at start) and those that only take effect at install.
     */
    public static final Map<String, String> REFUSED_KEYS = Map.of(
            "config", "it names a file to read; give its entries instead",
            "jfr", "it names a file to write; only the start-up arguments may name one",
            "jfr.max-size", "it only applies to the recording started at start-up",
            "jfr.max-age", "it only applies to the recording started at start-up",
            "profile-on-spin", "it names a directory to write to; only the start-up arguments may name one",
            "fix.kwik-stream-stall", "it only applies when the agent installs its hooks (restart or attach anew)",
            "fix.kwik-loss-timer", "it only applies when the agent installs its hooks (restart or attach anew)",
            "detect", "it only applies when the agent installs its hooks (restart or attach anew)",
            "targets", "it only applies when the agent installs its hooks (restart or attach anew)");

    /** Merging a change into the configuration and putting it in force is one step: concurrent sets never lose one. */
    private static final Object LOCK = new Object();
    /** Set by {@link #detach}; cleared when the agent starts again (a new attach registers anew). */
    private static volatile boolean detached;

    @Override
    public String set(String entries) {
        synchronized (LOCK) {
            if (detached || AgentRuntime.config() == null) {
                throw new IllegalStateException("ccagent is detached (or never started) in this JVM: set is refused;"
                        + " attach the agent again to change its configuration");
            }
            AgentArgs.Result given = AgentArgs.parseEntries(entries);
            List<String> problems = new java.util.ArrayList<>(given.problems());
            for (String key : given.entries().keySet()) {
                String why = REFUSED_KEYS.get(key.strip());
                if (why != null) {
                    problems.add(key.strip() + ": refused over JMX: " + why);
                }
            }
            if (!problems.isEmpty()) {
                throw new IllegalArgumentException(String.join("\n", problems));
            }
            AgentConfig current = AgentRuntime.config();
            Map<String, String> merged = new LinkedHashMap<>(current.raw());
            merged.putAll(given.entries());
            merged.remove("config"); // never read a file here (a start-up config file's entries are in raw already)
            AgentArgs.Result result = AgentArgs.parse(merged);
            if (!result.ok()) {
                throw new IllegalArgumentException(String.join("\n", result.problems()));
            }
            reconfigurer.apply(result.config(), "set");
            if (given.entries().containsKey("canary") || given.entries().containsKey("netty.canary")
                    || given.entries().keySet().stream().anyMatch(k -> k.startsWith("guard"))) {
                // an operator's canary or guard decision re-enables rolled-back arms and starts every test afresh
                dev.ccagent.agent.measure.Guard.reEnableAll("set");
            }
            return getConfiguration();
        }
    }

    @Override
    public void detach() {
        synchronized (LOCK) {
            detached = true;
            detacher.detach();
        }
    }

    private static String trim(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
    }

    /** For tests and the CLI: the attribute names in display order. */
    public static List<String> attributes() {
        return List.of("Active", "Configuration", "DefaultAlgorithm", "CanarySplit", "ConnectionCounts",
                "Fallbacks", "FallbackCauses", "Modules", "Alarms", "Arms", "OngoingSpins", "StreamStalls",
                "OngoingStreamStalls");
    }
}
