package dev.ccagent.jfr;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/**
 * One connection measured the same way whatever controls it (our algorithms, the library's own
 * controller, a fallback, the application's quiche setting): written when the connection closes, every
 * N seconds while it lives, and at detach. Counters are cumulative since the connection started, so the
 * last summary of a connection (highest {@code sequence}) is its whole life.
 */
@Name(EventNames.CONNECTION_SUMMARY)
@Label("Connection Summary")
@Description("Per-connection totals measured identically for every canary arm: bytes sent, acknowledged and lost, "
        + "RTT distribution, application-limited time, lifetime")
@Category({"QUIC", "Congestion Control", "Canary"})
@StackTrace(false)
public final class ConnectionSummary extends jdk.jfr.Event {

    @Label("Agent Instance")
    @Description("Random id of the agent run that wrote the event (one JVM, one attach); with Connection Id and "
            + "Sequence it identifies a summary across merged recordings")
    public String agentInstance;

    @Label("Library")
    public String library;

    @Label("Connection Id")
    @Description("Original destination connection id, hex (the same on both ends)")
    public String connectionId;

    @Label("Role")
    @Description("server or client")
    public String role;

    @Label("Canary Arm")
    public String canaryArm;

    @Label("Algorithm")
    @Description("Algorithm in charge at the time of the summary; 'stock' for the library's own controller")
    public String algorithm;

    @Label("Controller")
    @Description("ccagent, stock, fallback or application's setting")
    public String controller;

    @Label("Trigger")
    @Description("close, periodic or detach")
    public String trigger;

    @Label("Sequence")
    @Description("0, 1, 2... per connection; the close summary has the highest")
    public long sequence;

    @Label("Lifetime")
    @Timespan(Timespan.NANOSECONDS)
    public long lifetime;

    @Label("Bytes Sent")
    @DataAmount(DataAmount.BYTES)
    public long bytesSent;

    @Label("Bytes Acknowledged")
    @DataAmount(DataAmount.BYTES)
    public long bytesAcked;

    @Label("Bytes Lost")
    @DataAmount(DataAmount.BYTES)
    public long bytesLost;

    @Label("Packets Sent")
    public long packetsSent;

    @Label("Packets Lost")
    public long packetsLost;

    @Label("RTT Samples")
    public long rttSamples;

    @Label("Min RTT")
    @Description("The connection's lowest RTT sample, from the agent's own RFC 9002 estimator (every connection, stock included)")
    @Timespan(Timespan.NANOSECONDS)
    public long minRtt;

    @Label("Smoothed RTT")
    @Description("The connection's RFC 9002 smoothed RTT at this summary, from the agent's own estimator")
    @Timespan(Timespan.NANOSECONDS)
    public long smoothedRtt;

    @Label("RTT p50")
    @Description("Median of the connection's RTT samples (log-bucket histogram, within 5%)")
    @Timespan(Timespan.NANOSECONDS)
    public long rttP50;

    @Label("RTT p95")
    @Timespan(Timespan.NANOSECONDS)
    public long rttP95;

    @Label("Application-Limited Time")
    @Description("Time the sender had nothing to send while the window allowed it")
    @Timespan(Timespan.NANOSECONDS)
    public long appLimitedTime;

    @Label("Transfer Time")
    @Description("From the first application-data (1-RTT) packet sent to the last acknowledgement received (no "
            + "handshake, no wait for the close): bytesAcked / transferTime is the goodput the peer saw")
    @Timespan(Timespan.NANOSECONDS)
    public long transferTime;

    @Label("Left Slow Start")
    @Description("The connection left slow start / STARTUP (moved enough bytes to measure the algorithm): the mode our controller reports; for a controller without one (kwik's, quiche's), a loss was declared")
    public boolean leftSlowStart;
}
