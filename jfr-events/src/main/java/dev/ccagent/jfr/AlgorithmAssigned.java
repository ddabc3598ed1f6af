package dev.ccagent.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** A connection got its congestion controller (or fell back to the stock one). */
@Name(EventNames.ALGORITHM_ASSIGNED)
@Label("Algorithm Assigned")
@Description("A QUIC connection was assigned a congestion control algorithm: arm, options and why")
@Category({"QUIC", "Congestion Control"})
@StackTrace(false)
public final class AlgorithmAssigned extends ControllerEvent {

    @Label("Role")
    @Description("server or client")
    public String role;

    @Label("Options")
    @Description("Options given for the algorithm, KEY=VALUE comma separated")
    public String options;

    @Label("Canary Arm")
    public String canaryArm;

    @Label("Reason")
    @Description("e.g. 'default arm', 'canary share 10%', 'fallback after an error'")
    public String reason;
}
