package dev.ccagent.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/** The guardrail ({@code guard=on}) stopped assigning new connections to a canary arm that is worse than the baseline. */
@Name(EventNames.CANARY_ROLLED_BACK)
@Label("Canary Rolled Back")
@Description("A canary arm was worse than the baseline arm by more than the margin (always-valid sequential test); new connections "
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
    @Description("Median over the newest (up to 2048) paired canary connections; cpu spin: canary connections with an episode")
    public double canaryValue;

    @Label("Baseline Value")
    public double baselineValue;

    @Label("Threshold")
    @Description("The margin: loss ratio, relative RTT p95 increase, relative goodput decrease; cpu spin: the canary's share p0")
    public double threshold;

    @Label("Canary Connections")
    public long canaryConnections;

    @Label("Baseline Connections")
    public long baselineConnections;

    @Label("Window")
    @Description("guard.window: the most time between the closes of a canary connection and its baseline partner")
    @Timespan(Timespan.NANOSECONDS)
    public long window;

    @Label("Trials")
    @Description("Pairs (canary connection, baseline connection) the deciding test counted; for cpu spin, episodes")
    public long trials;

    @Label("Worse Trials")
    @Description("Of those, the pairs where the canary connection was worse by more than the margin (cpu spin: episodes on the canary)")
    public long worseTrials;

    @Label("E-Value")
    @Description("The mixture sequential test's statistic; the rollback needs it at or above (number of tests)/alpha")
    public double eValue;

    @Label("Alpha")
    @Description("guard.alpha: the bound on rolling back an arm that is no worse, over the whole run")
    public double alpha;

    @Label("Evidence")
    @Description("One line with the figures that decided")
    public String evidence;
}
