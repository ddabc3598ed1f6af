package dev.ccagent.jfr;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Frequency;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/**
 * Bytes allocated by a connection's sender or receiver thread per packet it handled, sampled by the
 * agent's detector with the per-thread allocation counter (never per packet). A flagged window, and a
 * connection's last, are always written; the other unflagged ones (measurements) of one window are written for at most the agent's
 * {@code jfr.state-connections} connections, in rotation beyond that many, and {@link #weight} says how
 * many windows each stands for.
 */
@Name(EventNames.SEND_PATH_ALLOCATION)
@Label("Send Path Allocation")
@Description("Heap allocated per packet on a connection's sender or receiver thread over one detector window "
        + "(per-thread allocated bytes, sampled); flagged above the threshold")
@Category({"QUIC", "Congestion Control", "Send Loop"})
@StackTrace(false)
public final class SendPathAllocation extends ConnectionEvent {

    @Label("Path")
    @Description("sender or receiver (a thread of the connection's own or shared with other work, as kwik's), or event loop "
            + "(a thread shared between connections, as Netty's: one event per loop and window, connectionId empty, the "
            + "loop's whole allocation against all its QUIC connections' packets)")
    public String path;

    @Label("Loop Connection Count")
    @Description("Path event loop: the QUIC connections on the loop that were evaluated in the window; 1 otherwise")
    public int loopConnectionCount;

    @Label("Thread Name")
    public String threadName;

    @Label("Allocated")
    @DataAmount(DataAmount.BYTES)
    public long allocated;

    @Label("Packets")
    @Description("Datagrams sent (sender) or packets received (receiver) in the window; both, of all its QUIC connections (event loop)")
    public long packets;

    @Label("Allocated Per Packet")
    @Description("Allocated divided by max(1, packets)")
    @DataAmount(DataAmount.BYTES)
    public long bytesPerPacket;

    @Label("Allocation Rate")
    @DataAmount(DataAmount.BYTES)
    @Frequency
    public long allocationRate;

    @Label("Flagged")
    @Description("Above the per-packet threshold (or allocating fast while handling no packets); an event loop, which serves "
            + "other work too, only on its rate")
    public boolean flagged;

    @Label("Threshold Per Packet")
    @DataAmount(DataAmount.BYTES)
    public long threshold;

    @Label("Window")
    @Timespan(Timespan.NANOSECONDS)
    public long window;

    @Label("Weight")
    @Description("Detector windows of this connection the event stands for: 1 when flagged or when every connection's"
            + " window was written; beyond jfr.state-connections connections an unflagged window is written for a"
            + " rotating share of them, each connection once in this many windows")
    public double weight;
}
