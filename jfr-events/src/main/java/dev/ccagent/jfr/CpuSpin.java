package dev.ccagent.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.Period;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/**
 * A spin episode: a thread that sends for a connection burned most of a core for seconds while the
 * connection made no or almost no progress, whatever the loop's shape. An episode is in the recording
 * from the moment it is established: one event at detection, one every
 * {@code CpuSpinMonitor.REPORT_EVERY} while it lasts (with the top frames sampled again), one at its
 * end, and one for each episode still open when a chunk ends (recording stop, dump rotation, JVM exit):
 * every event of an episode carries its {@link #episodeId} and its figures since the episode started,
 * {@link #endedBy} is {@code ongoing} until the last one. Consecutive events of an episode tile its
 * time after detection; the report shows the last one of each episode.
 */
@Name(EventNames.CPU_SPIN)
@Label("CPU Spin")
@Description("A sending thread burned most of a core while its connection made (almost) no progress")
@Category({"QUIC", "Congestion Control", "Send Loop"})
@StackTrace(false)
@Period("endChunk")
public final class CpuSpin extends jdk.jfr.Event {

    /** At most this many ids in {@link #loopConnections}. */
    public static final int LOOP_CONNECTIONS_LISTED = 32;

    @Label("Episode Id")
    @Description("The same for every event of one episode (unique in the JVM)")
    public long episodeId;

    @Label("Episode Duration")
    @Description("From the start of the window that established the episode to this event's end")
    @Timespan(Timespan.NANOSECONDS)
    public long episodeDuration;

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
    @Description("CPU time of the thread divided by wall time over the episode so far, 0..1 per core")
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
    @Description("The spinning thread's top frames from the latest stack sample, innermost first")
    public String topFrames;

    @Label("Flame Graph")
    @Description("Path of the async-profiler capture, when profile-on-spin is on")
    public String flameGraph;

    @Label("Ended By")
    @Description("progress, close, idle (the thread stopped burning CPU without progress), detach; ongoing while the episode lasts (also at shutdown or recording stop)")
    public String endedBy;

    @Label("Datagrams")
    @Description("Datagrams sent and received during the episode, when the library's hooks count them (Netty)")
    public long datagrams;

    @Label("Loop Connections")
    @Description("A spin of the event loop itself (no connection blamed, connectionId empty): the QUIC connections the loop serves, which wait behind it, ids comma-separated (at most "
            + CpuSpin.LOOP_CONNECTIONS_LISTED + ", then how many more); empty otherwise")
    public String loopConnections;

    @Label("Loop Connection Count")
    @Description("How many QUIC connections the spinning loop serves (0 when a connection is blamed)")
    public int loopConnectionCount;

    @Label("Loop Spin")
    @Description("How the event loop itself spins (no connection blamed): blocked (in one call; its connections' tasks wait a second or more) or polling (it returns from its poll without work, most stack samples inside the poll, its tasks still run); empty when a connection is blamed")
    public String loopSpin;

    @Label("Loop Task Delay")
    @Description("How late the loop ran the tasks its QUIC connections scheduled on it, the longest wait in the episode so far: a second or more when the loop is blocked in one call (its connections starve), milliseconds when it spins through its poll; 0 when a connection is blamed")
    @Timespan(Timespan.NANOSECONDS)
    public long loopTaskDelay;

    @Label("Detected After")
    @Description("The spin was established over this window before the episode's first event (the detector's window)")
    @Timespan(Timespan.NANOSECONDS)
    public long detectedAfter;
}
