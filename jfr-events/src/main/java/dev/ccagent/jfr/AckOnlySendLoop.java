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
 * Over one detector window a connection sent many ACK-only packets while no ack-eliciting data made
 * progress and its congestion controller kept refusing to send: the signature of quic-go issue 4054
 * (a pacer at rate 0, the sender looping on ACK-only packets).
 */
@Name(EventNames.ACK_ONLY_SEND_LOOP)
@Label("ACK-Only Send Loop")
@Description("Many ACK-only packets sent over a short window while no ack-eliciting data progressed and the "
        + "congestion controller refused to send")
@Category({"QUIC", "Congestion Control", "Send Loop"})
@StackTrace(false)
public final class AckOnlySendLoop extends ControllerEvent {

    @Label("ACK-Only Packets")
    @Description("Datagrams sent in the window that carried no ack-eliciting frame")
    public long ackOnlyPackets;

    @Label("Ack-Eliciting Packets")
    @Description("Ack-eliciting (in-flight) packets sent in the window")
    public long ackElicitingPackets;

    @Label("Ack-Eliciting Bytes")
    @Description("Bytes of those packets (a PING added to an ACK is tens of bytes; data packets are ~1200)")
    @DataAmount(DataAmount.BYTES)
    public long ackElicitingBytes;

    @Label("Packets Received")
    public long packetsReceived;

    @Label("Refusals")
    @Description("Times the congestion controller answered 'no room' or a send time in the past in the window")
    public long refusals;

    @Label("ACK-Only Rate")
    @Description("ACK-only packets per second")
    @Frequency
    public double ackOnlyRate;

    @Label("Window")
    @Timespan(Timespan.NANOSECONDS)
    public long window;
}
