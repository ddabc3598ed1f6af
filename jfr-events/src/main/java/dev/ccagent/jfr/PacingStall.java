package dev.ccagent.jfr;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Frequency;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/** The pacer held the sender back for much longer than the pacing rate said it would. */
@Name(EventNames.PACING_STALL)
@Label("Pacing Stall")
@Description("The sender was blocked by the pacer for longer than expected: the wait from the first refusal "
        + "to the next packet the pacer allowed, against the wait the pacer announced")
@Category({"QUIC", "Congestion Control", "Pacing"})
@StackTrace(false)
public final class PacingStall extends ControllerEvent {

    @Label("Wait")
    @Description("From the pacer's first refusal until it allowed a packet")
    @Timespan(Timespan.NANOSECONDS)
    public long waitTime;

    @Label("Expected Wait")
    @Description("The release time the pacer announced at its first refusal, relative to that refusal")
    @Timespan(Timespan.NANOSECONDS)
    public long expectedWait;

    @Label("Pacing Rate")
    @DataAmount(DataAmount.BYTES)
    @Frequency
    public long pacingRate;
}
