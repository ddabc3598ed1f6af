package dev.ccagent.jfr;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Frequency;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.Percentage;
import jdk.jfr.StackTrace;

/** The pacing rate or quantum moved by more than the agent's threshold since the last such event. */
@Name(EventNames.PACING_RATE_CHANGE)
@Label("Pacing Rate Change")
@Description("The pacing rate or pacing quantum of a connection changed by more than the threshold "
        + "(10% by default) since the last event of this type for the connection")
@Category({"QUIC", "Congestion Control", "Pacing"})
@StackTrace(false)
public final class PacingRateChange extends ControllerEvent {

    @Label("Previous Rate")
    @DataAmount(DataAmount.BYTES)
    @Frequency
    public long previousRate;

    @Label("Rate")
    @DataAmount(DataAmount.BYTES)
    @Frequency
    public long rate;

    @Label("Previous Quantum")
    @DataAmount(DataAmount.BYTES)
    public long previousQuantum;

    @Label("Quantum")
    @DataAmount(DataAmount.BYTES)
    public long quantum;

    @Label("Rate Change")
    @Description("Relative change of the rate, e.g. -0.5 for a halving")
    @Percentage
    public double rateChange;
}
