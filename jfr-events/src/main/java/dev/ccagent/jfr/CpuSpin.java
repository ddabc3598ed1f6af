package dev.ccagent.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/**
 * One spin episode: a thread that sends for a connection burned most of a core for seconds while the
 * connection made no or almost no progress, whatever the loop's shape. The event's start and end are the
 * episode's; it is written when the episode ends (progress resumed, the connection closed, or detach).
 */
@Name("dev.ccagent.CpuSpin")
@Label("CPU Spin")
@Description("A sending thread burned most of a core while its connection made (almost) no progress")
@Category({"QUIC", "Congestion Control", "Send Loop"})
@StackTrace(false)
public final class CpuSpin extends jdk.jfr.Event {

    @Label("Library")
    public String library;

    @Label("Connection Id")
    @Description("The connection the thread sends for; empty when a shared thread's spin cannot be attributed")
    public String connectionId;

    @Label("Thread Name")
    public String threadName;

    @Label("Thread Id")
    public long threadId;

    @Label("CPU Share")
    @Description("CPU time of the thread divided by wall time over the episode, 0..1 per core")
    public double cpuShare;

    @Label("CPU Time")
    @Timespan(Timespan.NANOSECONDS)
    public long cpuTime;

    @Label("Bytes Acknowledged")
    @Description("Bytes acknowledged during the episode")
    public long bytesAcked;

    @Label("Ack-Eliciting Datagrams Sent")
    @Description("During the episode")
    public long ackElicitingSent;

    @Label("Application Bytes")
    @Description("Application bytes moved during the episode")
    public long appBytes;

    @Label("Top Frames")
    @Description("The spinning thread's top frames from one stack sample, innermost first")
    public String topFrames;

    @Label("Flame Graph")
    @Description("Path of the async-profiler capture, when profile-on-spin is on")
    public String flameGraph;

    @Label("Ended By")
    @Description("progress, close, idle (the thread stopped burning CPU without progress), detach or ongoing")
    public String endedBy;

    @Label("Datagrams")
    @Description("Datagrams sent and received during the episode, when the library's hooks count them (Netty)")
    public long datagrams;

    @Label("Detected After")
    @Description("The spin was established over this window before the event's start (the detector's window)")
    @Timespan(Timespan.NANOSECONDS)
    public long detectedAfter;
}
