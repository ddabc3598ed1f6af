package dev.ccagent.sim;

import java.util.BitSet;

/**
 * The receiving end of a flow: acks every second ack-eliciting packet, at once on a gap, or after
 * max_ack_delay; ACK frames go onto the {@link ReturnPath}.
 */
final class FlowReceiver {
    final FlowSender flow;
    final BitSet received = new BitSet();
    final LongList pending = new LongList();
    long pendingBytes;
    long largestReceived = -1;
    long largestReceivedAt;
    int unackedEliciting;
    long timerToken;
    boolean timerArmed;
    long deliveredPayload;

    private final SimulationConfig sim;
    private final EventQueue events;
    private final ReturnPath returnPath;

    FlowReceiver(FlowSender flow, SimulationConfig sim, EventQueue events, ReturnPath returnPath) {
        this.flow = flow;
        this.sim = sim;
        this.events = events;
        this.returnPath = returnPath;
    }

    void onData(Packet p) {
        flow.queueDelays.add(p.queueDelay);
        sim.observer.onPacketDelivered(events.now(), flow.index, p.number, p.queueDelay);
        int bit = (int) Math.min(Integer.MAX_VALUE, p.number);
        if (received.get(bit)) {
            return;
        }
        received.set(bit);
        deliveredPayload += p.payload;
        boolean gap = p.number != largestReceived + 1;
        if (p.number > largestReceived) {
            largestReceived = p.number;
            largestReceivedAt = events.now();
        }
        pending.add(p.number);
        pendingBytes += p.size;
        if (!p.ackEliciting) {
            return;
        }
        unackedEliciting++;
        if (unackedEliciting >= 2 || gap || sim.maxAckDelayNanos == 0) {
            sendAckNow();
        } else if (!timerArmed) {
            timerArmed = true;
            timerToken++;
            ScheduledEvent e = events.schedule(events.now() + sim.maxAckDelayNanos, EventType.ACK_TIMER, flow.index, null);
            e.seqToken = timerToken;
        }
    }

    void onAckTimer(long token) {
        if (token == timerToken && timerArmed) {
            sendAckNow();
        }
    }

    void sendAckNow() {
        timerArmed = false;
        timerToken++;
        unackedEliciting = 0;
        if (pending.size() == 0) {
            return;
        }
        AckFrame ack = new AckFrame(flow.index, pending.toArray(), largestReceived,
                events.now() - largestReceivedAt, pendingBytes);
        pending.clear();
        pendingBytes = 0;
        returnPath.send(ack);
    }
}
