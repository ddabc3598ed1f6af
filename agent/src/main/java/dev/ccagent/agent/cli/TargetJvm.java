package dev.ccagent.agent.cli;

import dev.ccagent.agent.runtime.AgentVersion;
import com.sun.tools.attach.AgentInitializationException;
import com.sun.tools.attach.AgentLoadException;
import com.sun.tools.attach.AttachNotSupportedException;
import com.sun.tools.attach.VirtualMachine;
import dev.ccagent.agent.control.Control;
import dev.ccagent.agent.control.ControlMXBean;

import javax.management.JMX;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.Optional;
import java.util.Properties;

/**
 * A JVM the CLI talks to, through the Attach API and the JMX agent it can start. Every failure is a
 * {@link CliException} whose message says what went wrong and what to do.
 */
final class TargetJvm implements AutoCloseable {

    private final String pid;
    private final VirtualMachine vm;
    private JMXConnector jmx;

    private TargetJvm(String pid, VirtualMachine vm) {
        this.pid = pid;
        this.vm = vm;
    }

    static TargetJvm attach(String pid) {
        long number;
        try {
            number = Long.parseLong(pid);
        } catch (NumberFormatException e) {
            throw new CliException(2, "'" + pid + "' is not a process id");
        }
        if (number == ProcessHandle.current().pid()) {
            throw new CliException(2, "pid " + pid + " is this ccagent command itself");
        }
        Optional<ProcessHandle> process = ProcessHandle.of(number);
        if (process.isEmpty()) {
            throw new CliException(1, "no process with pid " + pid + " (ccagent list shows the running JVMs)");
        }
        try {
            return new TargetJvm(pid, VirtualMachine.attach(pid));
        } catch (AttachNotSupportedException | IOException e) {
            String me = System.getProperty("user.name");
            Optional<String> owner = process.get().info().user();
            if (owner.isPresent() && !owner.get().equals(me) && !"root".equals(me)) {
                throw new CliException(1, "cannot attach to pid " + pid + ": it belongs to user " + owner.get()
                        + " and this command runs as " + me + "; run ccagent as " + owner.get());
            }
            throw new CliException(1, "cannot attach to pid " + pid + ": " + e.getMessage()
                    + " (is it a JVM? it must run with the same user and a compatible Java version)");
        }
    }

    String pid() {
        return pid;
    }

    Properties systemProperties() {
        try {
            return vm.getSystemProperties();
        } catch (IOException e) {
            throw new CliException(1, "cannot read the system properties of pid " + pid + ": " + e.getMessage());
        }
    }

    /** Whether ccagent already runs in the target. */
    boolean hasAgent() {
        return systemProperties().getProperty(AgentVersion.ATTACHED_PROPERTY) != null;
    }

    /** Loads the agent jar this CLI runs from into the target, with {@code args}. */
    void loadAgent(String args) {
        String jar = agentJar();
        try {
            vm.loadAgent(jar, args);
        } catch (AgentLoadException | IOException e) {
            if (dynamicAgentsForbidden()) {
                throw new CliException(1, "pid " + pid + " refuses dynamic agents: it was started with "
                        + "-XX:-EnableDynamicAgentLoading; restart it with -XX:+EnableDynamicAgentLoading, or start it with "
                        + "-javaagent:" + jar);
            }
            throw new CliException(1, "loading " + jar + " into pid " + pid + " failed: " + e);
        } catch (AgentInitializationException e) {
            throw new CliException(1, "the agent failed to start in pid " + pid + " (see that process's log): " + e);
        }
    }

    /** The management interface of the agent in the target. */
    ControlMXBean control() {
        try {
            if (jmx == null) {
                jmx = JMXConnectorFactory.connect(new JMXServiceURL(vm.startLocalManagementAgent()));
            }
            MBeanServerConnection connection = jmx.getMBeanServerConnection();
            ObjectName name = new ObjectName(Control.OBJECT_NAME);
            if (!connection.isRegistered(name)) {
                throw new CliException(1, "ccagent is not attached to pid " + pid + " (use: ccagent attach " + pid + ")");
            }
            return JMX.newMXBeanProxy(connection, name, ControlMXBean.class);
        } catch (IOException | javax.management.MalformedObjectNameException e) {
            throw new CliException(1, "cannot reach the management interface of pid " + pid + ": " + e.getMessage());
        }
    }

    private boolean dynamicAgentsForbidden() {
        try {
            if (jmx == null) {
                jmx = JMXConnectorFactory.connect(new JMXServiceURL(vm.startLocalManagementAgent()));
            }
            com.sun.management.HotSpotDiagnosticMXBean diag = ManagementFactory.newPlatformMXBeanProxy(
                    jmx.getMBeanServerConnection(), "com.sun.management:type=HotSpotDiagnostic",
                    com.sun.management.HotSpotDiagnosticMXBean.class);
            return "false".equals(diag.getVMOption("EnableDynamicAgentLoading").getValue());
        } catch (Exception e) {
            return false; // the flag does not exist before JDK 21, or the target cannot tell
        }
    }

    static String agentJar() {
        try {
            Path p = Path.of(TargetJvm.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            return p.toAbsolutePath().toString();
        } catch (Exception e) {
            throw new CliException(1, "cannot find the ccagent jar this command runs from: " + e);
        }
    }

    @Override
    public void close() {
        try {
            if (jmx != null) {
                jmx.close();
            }
        } catch (IOException ignored) {
            // closing anyway
        }
        try {
            vm.detach();
        } catch (IOException ignored) {
            // closing anyway
        }
    }
}
