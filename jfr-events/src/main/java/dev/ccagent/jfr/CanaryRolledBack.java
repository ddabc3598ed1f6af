package dev.ccagent.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/** The guardrail ({@code guard=on}) stopped assigning new connections to a canary arm that is worse than the baseline. */
@Name("dev.ccagent.CanaryRolledBack")
@Label("Canary Rolled Back")
@Description("A canary arm was significantly worse than the baseline arm over the guard window; new connections "
        + "get the baseline, existing ones are untouched")
@Category({"QUIC", "Congestion Control", "Canary"})
@StackTrace(false)
public final class CanaryRolledBack extends jdk.jfr.Event {

    @Label("Library")
    public String library;

    @Label("Canary Arm")
    public String canaryArm;

    @Label("Canary Algorithm")
    public String canaryAlgorithm;

    @Label("Baseline Algorithm")
    public String baselineAlgorithm;

    @Label("Metric")
    @Description("What tripped the guard: loss ratio, RTT p95 increase, spin alarm")
    public String metric;

    @Label("Canary Value")
    public double canaryValue;

    @Label("Baseline Value")
    public double baselineValue;

    @Label("Threshold")
    public double threshold;

    @Label("Canary Connections")
    public long canaryConnections;

    @Label("Baseline Connections")
    public long baselineConnections;

    @Label("Window")
    @Timespan(Timespan.NANOSECONDS)
    public long window;

    @Label("Evidence")
    @Description("One line with the figures that decided")
    public String evidence;
}
