package dev.ccagent.agent.jfr;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.log.AgentLog;
import dev.ccagent.jfr.JfrSwitch;

/**
 * The agent's JFR lifecycle, called by {@code CcAgent}: the JFR switch and periodic hook, the
 * agent's own recording ({@code jfr=}) and lifecycle events. (The spin detector, which writes into
 * the recording, is started after {@link #apply} and stopped before {@link #detached} by
 * {@code CcAgent}.) Everything here fails open.
 */
public final class AgentJfr {

    private AgentJfr() {
    }

    /**
     * Puts a configuration in force, on a first start, a {@code set} and a second attach alike: the JFR
     * switch and the periodic hook (each once), the agent's own recording when the configuration asks
     * for one and none runs, and a lifecycle event ({@code installed}, {@code attached} or
     * {@code reconfigured}, with its detail).
     */
    public static void apply(AgentConfig config, String lifecycle, String detail) {
        try {
            if (JfrSwitch.install()) {
                CongestionStatePoller.register();
                if (config.jfrFile() != null && AgentRecording.destination() == null) {
                    AgentRecording.start(config.jfrFile(), config.jfrMaxSizeBytes(), config.jfrMaxAgeNanos());
                }
                JfrSwitch.refresh();
            } else if (config.jfrFile() != null) {
                AgentLog.warn("jfr=" + config.jfrFile() + ": this runtime has no jdk.jfr module; no recording");
            }
            CcJfr.lifecycle(lifecycle, null, null, detail);
        } catch (Throwable t) {
            AgentLog.error("observability " + lifecycle + " failed; congestion control is unaffected", t);
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
