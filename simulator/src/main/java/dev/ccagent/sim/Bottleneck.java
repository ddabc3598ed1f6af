package dev.ccagent.sim;

import dev.ccagent.link.GilbertElliott;
import dev.ccagent.link.LinkModel;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The data path of the bottleneck, played out from its {@link LinkModel}: random loss → drop-tail
 * queue → serialisation at the current rate → one-way propagation (RTT/2) →
 * {@link EventType#DATA_ARRIVE} at the receiver. Burst loss is not modelled here (yet): a link
 * model with Gilbert–Elliott loss is refused. Keeps the
 * rate history so that utilisation can be measured against what the link could have carried.
 *
 * <p>Throws {@link IllegalStateException} on a queue above its buffer, a packet started before the
 * previous one left, or departures out of order.
 */
final class Bottleneck {
    private final LinkModel link;
    private final EventQueue events;
    private final SplittableRandom lossRandom;

    private long rateBps;
    private final ArrayDeque<Packet> queue = new ArrayDeque<>();
    private long queuedBytes;
    private long maxQueuedBytes;
    private boolean linkBusy;
    private long linkBytesDeparted;
    private long lastDepartureEnd;
    private final List<long[]> rateHistory = new ArrayList<>();

    Bottleneck(SimulationConfig config, EventQueue events) {
        this.link = config.link;
        if (link.burstLoss() != GilbertElliott.NONE) {
            throw new IllegalArgumentException("the simulator does not model burst loss: " + link.burstLoss());
        }
        this.events = events;
        this.lossRandom = new SplittableRandom(config.seed);
        this.rateBps = link.rateBitsPerSecond();
        rateHistory.add(new long[] {0, rateBps});
    }

    long queuedBytes() {
        return queuedBytes;
    }

    long maxQueuedBytes() {
        return maxQueuedBytes;
    }

    long bytesDeparted() {
        return linkBytesDeparted;
    }

    /** The bottleneck rate changes now. */
    void changeRate(long bitsPerSecond) {
        rateBps = bitsPerSecond;
        rateHistory.add(new long[] {events.now(), rateBps});
    }

    /** A packet from a sender reaches the bottleneck: lost at random, tail-dropped, or queued. */
    void enter(Packet p) {
        if (link.lossProbability() > 0 && lossRandom.nextDouble() < link.lossProbability()) {
            p.flow.linkDrops++;
            return;
        }
        if (queuedBytes + p.size > link.bufferBytes()) {
            p.flow.linkDrops++;
            p.flow.tailDrops++;
            return;
        }
        p.enqueuedAt = events.now();
        queue.addLast(p);
        queuedBytes += p.size;
        maxQueuedBytes = Math.max(maxQueuedBytes, queuedBytes);
        if (queuedBytes > link.bufferBytes()) {
            throw new IllegalStateException("queue " + queuedBytes + " B above buffer " + link.bufferBytes());
        }
        if (!linkBusy) {
            startTransmission();
        }
    }

    private void startTransmission() {
        Packet p = queue.peekFirst();
        if (p == null) {
            linkBusy = false;
            return;
        }
        linkBusy = true;
        long now = events.now();
        if (now < lastDepartureEnd) {
            throw new IllegalStateException("link started a packet before the previous one left");
        }
        p.queueDelay = now - p.enqueuedAt;
        long serialisation = Math.max(1, (long) Math.ceil(p.size * 8.0 * 1e9 / rateBps));
        lastDepartureEnd = now + serialisation;
        events.schedule(now + serialisation, EventType.LINK_DEPART, p.flow.index, p);
    }

    /** The packet at the head of the queue has been serialised: it propagates to the receiver. */
    void onDeparture(Packet p) {
        Packet head = queue.pollFirst();
        if (head != p) {
            throw new IllegalStateException("bottleneck queue out of order");
        }
        queuedBytes -= p.size;
        linkBytesDeparted += p.size;
        events.schedule(events.now() + link.delayNanos(), EventType.DATA_ARRIVE, p.flow.index, p);
        startTransmission();
    }

    /** Bits the bottleneck could have carried between two times, following the rate schedule. */
    double capacityBits(long from, long to) {
        double bits = 0;
        for (int i = 0; i < rateHistory.size(); i++) {
            long segStart = rateHistory.get(i)[0];
            long segEnd = i + 1 < rateHistory.size() ? rateHistory.get(i + 1)[0] : Long.MAX_VALUE;
            long a = Math.max(from, segStart);
            long b = Math.min(to, segEnd);
            if (b > a) {
                bits += rateHistory.get(i)[1] * ((b - a) / 1e9);
            }
        }
        return bits;
    }
}
