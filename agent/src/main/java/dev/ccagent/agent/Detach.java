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
        step(AgentRuntime::stopTimer, "pacing timer not stopped");
        // the pending summary lines, and its thread
        step(dev.ccagent.agent.runtime.FallbackLog::stop, "fallback summary not stopped");
        // what events report as applied
        step(dev.ccagent.agent.instrument.Transformed::forget, "the record of transformed types not cleared");
        step(ControllerFactory::clearCache, "controller cache not cleared");
        return switched;
    }

    /** One step of the detach; a failure is logged and the next step runs. */
    private static void step(Runnable step, String failure) {
        try {
            step.run();
        } catch (Throwable t) {
            AgentLog.warn("detach: " + failure + ": " + t);
        }
    }
}
