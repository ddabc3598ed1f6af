package dev.ccagent.agent.jfr;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.detect.SpinDetector;
import dev.ccagent.agent.log.AgentLog;
import dev.ccagent.jfr.JfrSwitch;

/**
 * The agent's observability lifecycle, called by {@code CcAgent}: the JFR switch and periodic
 * hook, the agent's own recording ({@code jfr=}), the spin detector and lifecycle events.
 * Everything here fails open.
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
            SpinDetector.apply(config);
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
            SpinDetector.apply(config);
            CcJfr.lifecycle("reconfigured", null, null, how + ": " + config);
        } catch (Throwable t) {
            AgentLog.error("observability reconfiguration failed", t);
        }
    }

    /** The agent detached: stop the detector and write the agent's recording. */
    public static void detached() {
        try {
            CcJfr.lifecycle("detached", null, null, "new connections use the stock congestion control");
            SpinDetector.stop();
            AgentRecording.stop();
            JfrSwitch.refresh();
        } catch (Throwable t) {
            AgentLog.error("observability shutdown failed", t);
        }
    }
}
