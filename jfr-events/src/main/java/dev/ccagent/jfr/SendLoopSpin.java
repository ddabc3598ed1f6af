package dev.ccagent.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Frequency;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/**
 * Over one detector window the sender loop of a connection woke up far more often than received
 * packets explain without sending anything, or its controller answered send times already in the past.
 */
@Name(EventNames.SEND_LOOP_SPIN)
@Label("Send Loop Spin")
@Description("The sender loop woke up many times per second with nothing sent (beyond what received packets "
        + "explain), or the congestion controller answered send times already in the past")
@Category({"QUIC", "Congestion Control", "Send Loop"})
@StackTrace(false)
public final class SendLoopSpin extends ControllerEvent {

    @Label("Wake-Ups")
    @Description("Sender loop iterations in the window")
    public long wakeups;

    @Label("Empty Wake-Ups")
    @Description("Iterations that sent no datagram")
    public long emptyWakeups;

    @Label("Packets Received")
    @Description("Received packets (each wakes the sender once, legitimately)")
    public long packetsReceived;

    @Label("Send Times In The Past")
    @Description("Times the controller claimed no budget yet answered a send time already in the past")
    public long pastSendTimes;

    @Label("Empty Wake-Up Rate")
    @Description("Empty wake-ups not explained by received packets, per second")
    @Frequency
    public double emptyWakeupRate;

    @Label("Window")
    @Timespan(Timespan.NANOSECONDS)
    public long window;
}
