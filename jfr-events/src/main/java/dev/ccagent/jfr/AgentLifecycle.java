package dev.ccagent.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** The agent was installed, attached, reconfigured or detached; a target module applied or skipped. */
@Name(EventNames.AGENT_LIFECYCLE)
@Label("Agent Lifecycle")
@Description("ccagent installed, attached, reconfigured or detached; a target library matched (applied) or "
        + "was skipped and why; a profiler capture started or failed")
@Category({"QUIC", "Agent"})
@StackTrace(false)
public final class AgentLifecycle extends jdk.jfr.Event {

    @Label("Action")
    @Description("installed, attached, reconfigured, detached, module applied, module skipped, "
            + "recording started, profiler capture, profiler unavailable")
    public String action;

    @Label("Library")
    @Description("Target library, when the action is about one")
    public String library;

    @Label("Library Version")
    public String libraryVersion;

    @Label("Detail")
    @Description("Configuration, class loader, reason for a skip, capture files ...")
    public String detail;

    @Label("Agent Version")
    public String agentVersion;
}
