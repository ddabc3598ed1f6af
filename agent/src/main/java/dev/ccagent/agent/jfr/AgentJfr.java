package dev.ccagent.agent.jfr;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.log.AgentLog;
import dev.ccagent.jfr.JfrSwitch;

/**
 * The agent's JFR lifecycle, called by {@code CcAgent}: the JFR switch and periodic hook, the
 * agent's own recording ({@code jfr=}) and lifecycle events. (The spin detector, which writes into
 * the recording, is started after {@link #started} and stopped before {@link #detached} by
 * {@code CcAgent}.) Everything here fails open.
 */
public final class AgentJfr {

    private AgentJfr() {
    }

    /** First start (premain or first attach). */
    public static void started(AgentConfig config, String how) {
        try {
            if (JfrSwitch.install()) {
                CongestionStatePoller.register();
                if (config.jfrFile() != null) {
                    AgentRecording.start(config.jfrFile(), config.jfrMaxSizeBytes(), config.jfrMaxAgeNanos());
                }
                JfrSwitch.refresh();
            } else if (config.jfrFile() != null) {
                AgentLog.warn("jfr=" + config.jfrFile() + ": this runtime has no jdk.jfr module; no recording");
            }
            CcJfr.lifecycle("attach".equals(how) ? "attached" : "installed", null, null,
                    config + "; Java " + Runtime.version());
        } catch (Throwable t) {
            AgentLog.error("observability start-up failed; congestion control is unaffected", t);
        }
    }

    /** A running agent got a new configuration. */
    public static void reconfigured(AgentConfig config, String how) {
        try {
            if (config.jfrFile() != null && AgentRecording.destination() == null && JfrSwitch.install()) {
                CongestionStatePoller.register();
                AgentRecording.start(config.jfrFile(), config.jfrMaxSizeBytes(), config.jfrMaxAgeNanos());
                JfrSwitch.refresh();
            }
            CcJfr.lifecycle("reconfigured", null, null, how + ": " + config);
        } catch (Throwable t) {
            AgentLog.error("observability reconfiguration failed", t);
        }
    }

    /** The agent detached (its spin detector already stopped): write the agent's recording. */
    public static void detached() {
        try {
            CcJfr.lifecycle("detached", null, null, "new connections use the stock congestion control");
            AgentRecording.stop();
            JfrSwitch.refresh();
        } catch (Throwable t) {
            AgentLog.error("observability shutdown failed", t);
        }
    }
}
