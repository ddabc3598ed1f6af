package dev.ccagent.agent;

import dev.ccagent.agent.connection.LiveConnections;
import dev.ccagent.agent.log.AgentLog;
import dev.ccagent.agent.runtime.AgentRuntime;
import dev.ccagent.agent.select.ControllerFactory;

/**
 * What detach does after the instrumentation is reset: existing kwik connections go back to kwik's
 * own controller (with our bytes in flight), the pacing timer stops (no connection needs it any
 * more), and the static caches that only served the detached configuration are pruned. Each step is
 * guarded: detach itself never throws.
 */
final class Detach {

    private Detach() {
    }

    /** Returns the number of kwik connections handed back to kwik's controller. */
    static int afterReset() {
        int switched = 0;
        try {
            switched = LiveConnections.detachAll();
        } catch (Throwable t) {
            AgentLog.warn("detach: kwik connections could not all be handed back: " + t);
        }
        try {
            AgentRuntime.stopTimer();
        } catch (Throwable t) {
            AgentLog.warn("detach: pacing timer not stopped: " + t);
        }
        try {
            dev.ccagent.agent.runtime.FallbackLog.stop(); // the pending summary lines, and its thread
        } catch (Throwable t) {
            AgentLog.warn("detach: fallback summary not stopped: " + t);
        }
        try {
            dev.ccagent.agent.instrument.Transformed.forget(); // what events report as applied
        } catch (Throwable t) {
            AgentLog.warn("detach: the record of transformed types not cleared: " + t);
        }
        try {
            ControllerFactory.clearCache();
        } catch (Throwable t) {
            AgentLog.warn("detach: controller cache not cleared: " + t);
        }
        return switched;
    }
}
