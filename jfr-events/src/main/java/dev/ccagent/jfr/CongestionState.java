package dev.ccagent.jfr;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Frequency;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.Period;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/**
 * A connection's congestion-control state: periodic (every second by default, only while a recording
 * wants it) and on every mode change. Fields an algorithm does not have are 0. The periodic events of
 * one period are at most the agent's {@code jfr.state-connections} (default 256): beyond that many
 * active connections they are a rotating sample, and {@link #weight} says how many connections each
 * one stands for.
 */
@Name(EventNames.CONGESTION_STATE)
@Label("Congestion State")
@Description("A QUIC connection's congestion controller: mode, window, bytes in flight, estimates and rates. "
        + "Periodic per connection, and on every mode change")
@Category({"QUIC", "Congestion Control"})
@Period("1 s")
@StackTrace(false)
public final class CongestionState extends jdk.jfr.Event {

    @Label("Library")
    @Description("QUIC library of the connection, e.g. kwik")
    public String library;

    @Label("Connection Id")
    @Description("Original destination connection id, hex (the same on both ends)")
    public String connectionId;

    @Label("Canary Arm")
    @Description("Arm of the split the connection belongs to: default or canary")
    public String canaryArm;

    @Label("Algorithm")
    @Description("Congestion control algorithm in charge; 'stock' when the library's own controller runs")
    public String algorithm;

    @Label("Mode")
    @Description("slow start, congestion avoidance, recovery, STARTUP, DRAIN, PROBE_BW..., PROBE_RTT; empty for stock")
    public String mode;

    @Label("Trigger")
    @Description("Why this event was written: periodic or mode change")
    public String trigger;

    @Label("PROBE_BW Phase")
    @Description("BBRv1 gain-cycle phase 0-7; -1 outside PROBE_BW")
    public int probeBwPhase;

    @Label("Congestion Window")
    @DataAmount(DataAmount.BYTES)
    public long congestionWindow;

    @Label("Bytes In Flight")
    @DataAmount(DataAmount.BYTES)
    public long bytesInFlight;

    @Label("Slow Start Threshold")
    @Description("0 while not set (no congestion event yet)")
    @DataAmount(DataAmount.BYTES)
    public long slowStartThreshold;

    @Label("Bandwidth Estimate")
    @Description("Delivery-rate estimate (BBR); 0 for loss-based algorithms")
    @DataAmount(DataAmount.BYTES)
    @Frequency
    public long bandwidthEstimate;

    @Label("Pacing Rate")
    @DataAmount(DataAmount.BYTES)
    @Frequency
    public long pacingRate;

    @Label("Pacing Quantum")
    @Description("Burst the pacer allows at once")
    @DataAmount(DataAmount.BYTES)
    public long pacingQuantum;

    @Label("Min RTT")
    @Description("The minimum RTT as the congestion controller holds it at this state")
    @Timespan(Timespan.NANOSECONDS)
    public long minRtt;

    @Label("Smoothed RTT")
    @Description("The smoothed RTT as the congestion controller holds it at this state")
    @Timespan(Timespan.NANOSECONDS)
    public long smoothedRtt;

    @Label("Packets Lost")
    @Description("Packets declared lost since the connection started")
    public long packetsLost;

    @Label("Congestion Events")
    @Description("Window reductions since the connection started")
    public long congestionEvents;

    @Label("Bytes Acknowledged")
    @DataAmount(DataAmount.BYTES)
    public long bytesAcked;

    @Label("Pacing Gain")
    public double pacingGain;

    @Label("Cwnd Gain")
    public double cwndGain;

    @Label("Weight")
    @Description("Active connections this event stands for in its period: the period's active connections divided by"
            + " the periodic events written for them (at most jfr.state-connections); 1 when every active connection"
            + " was written, and for mode changes. A reader scales sums and counts over a period by it")
    public double weight;
}
