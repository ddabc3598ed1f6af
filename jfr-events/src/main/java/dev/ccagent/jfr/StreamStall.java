package dev.ccagent.jfr;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.Period;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/**
 * A stalled stream: it held data to send, no send request was queued for it, its connection had
 * nothing ack-eliciting in flight (so no loss timer or probe could restart it) and flow control did not
 * block it, for longer than {@link #detectedAfter} (max(3 × PTO, 1 s)), with its offset and buffered
 * bytes unchanged. Only an application write, a flow-control update or the idle timeout can move such a
 * stream on. An episode is in the recording from the moment it is established, as a {@link CpuSpin} is:
 * one event at detection, one every 5 s while it lasts, one at its end, and one for each episode still
 * open when a chunk ends (recording stop, dump, JVM exit). Every event of an episode carries its
 * {@link #episodeId}; {@link #endedBy} is {@code ongoing} until the last one.
 */
@Name(EventNames.STREAM_STALL)
@Label("Stream Stall")
@Description("A stream held data to send with no send request queued, nothing in flight and no flow-control block"
        + " for longer than max(3 x PTO, 1 s)")
@Category({"QUIC", "Streams"})
@StackTrace(false)
@Period("endChunk")
public final class StreamStall extends ConnectionEvent {

    @Label("Episode Id")
    @Description("The same for every event of one episode (unique in the JVM)")
    public long episodeId;

    @Label("Episode Duration")
    @Description("From the first sample that saw the stream stalled to this event's end")
    @Timespan(Timespan.NANOSECONDS)
    public long episodeDuration;

    @Label("Stream Id")
    public long streamId;

    @Label("Bytes Waiting")
    @Description("Application bytes buffered for the stream and not sent")
    @DataAmount(DataAmount.BYTES)
    public long bytesWaiting;

    @Label("Retransmission Pending")
    @Description("Lost stream data was waiting to be sent again")
    public boolean retransmitPending;

    @Label("Stream Offset")
    @Description("How far the stream had sent: where it stopped")
    @DataAmount(DataAmount.BYTES)
    public long streamOffset;

    @Label("Writer Blocked")
    @Description("An application thread was blocked writing to the stream (its buffer was full)")
    public boolean writerBlocked;

    @Label("Fix On")
    @Description("Whether fix.kwik-stream-stall was applied to this kwik")
    public boolean fixOn;

    @Label("PTO")
    @Description("The connection's probe timeout at the latest sample (the library's own figure)")
    @Timespan(Timespan.NANOSECONDS)
    public long pto;

    @Label("Detected After")
    @Description("The threshold in force, max(3 x PTO, 1 s): the episode's first event comes at the first sample (1 s apart) past it")
    @Timespan(Timespan.NANOSECONDS)
    public long detectedAfter;

    @Label("Ended By")
    @Description("progress (the stream moved, got a send request or had nothing left to send), close (the stream reset, or it or its connection gone), detach; ongoing while the stall lasts (also at shutdown or recording stop)")
    public String endedBy;
}
