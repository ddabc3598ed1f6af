package dev.ccagent.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * A part of the agent failed (its code threw) or was refused (a swap the library did not take) and the connection
 * went on without that part of the agent (a fallback): the
 * first of a cause at once, then one event per cause per summary period with the count since the last,
 * the same as the {@code fallback:} and {@code fallback summary:} log lines.
 */
@Name(EventNames.FALLBACK)
@Label("Fallback")
@Description("A part of the agent failed or was refused and the connection went on without it; the first of a cause "
        + "(where, exception class) at once, then per cause and summary period the count since the last event")
@Category({"QUIC", "Agent"})
@StackTrace(false)
public final class Fallback extends jdk.jfr.Event {

    @Label("Kind")
    @Description("first (the first of this cause), summary (repeats since the cause's last event)")
    public String kind;

    @Label("Where")
    @Description("The part of the agent that failed, e.g. netty connection accounting")
    public String where;

    @Label("Exception")
    @Description("The exception's class, or \"no exception\"")
    public String exception;

    @Label("Consequence")
    @Description("What the connection does instead")
    public String consequence;

    @Label("Count")
    @Description("Fallbacks of this cause this event reports: 1 for the first, else those since the cause's last event")
    public long count;

    @Label("Total")
    @Description("Fallbacks of this cause since the agent started")
    public long total;
}
