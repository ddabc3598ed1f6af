package dev.ccagent.sim;

import dev.ccagent.cc.registry.Algorithms;
import dev.ccagent.cc.CcSnapshot;
import dev.ccagent.cc.CongestionController;
import dev.ccagent.link.RateChange;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A deterministic discrete-event simulation of QUIC-like flows through one bottleneck: this class
 * wires the parts together and runs the event loop.
 *
 * <p>Data path ({@link Bottleneck}): sender → random loss → drop-tail queue → serialisation at the
 * bottleneck rate → one-way propagation (RTT/2) → receiver. Return path ({@link ReturnPath}):
 * optional ACK aggregation → RTT/2 → sender; ACKs are never lost, so an ACK frame carries only the
 * packet numbers received since the previous one. Senders ({@link FlowSender}) run RFC 9002 loss
 * detection (packet threshold 3, time threshold 9/8, PTO with backoff, persistent congestion) and
 * feed one of our {@link CongestionController}s, honouring its window and its pacer. Receivers
 * ({@link FlowReceiver}) ack every second ack-eliciting packet, at once on a gap, or after
 * max_ack_delay.
 *
 * <p>Events at equal times run in the order they were scheduled, and all randomness comes from
 * {@link java.util.SplittableRandom}s seeded from the config: same config, same result, bit for bit.
 *
 * <p>Invariants are checked as it runs and violations throw {@link IllegalStateException}: a pacer
 * that answers with a send time in the past, a queue above its buffer, a link faster than its rate.
 */
public final class Simulator {

    private final SimulationConfig config;
    private final EventQueue events = new EventQueue();
    private final Bottleneck bottleneck;
    private final ReturnPath returnPath;
    private final List<FlowSender> flows = new ArrayList<>();
    /** Scratch state the controllers' snapshots pass through. */
    private final CcSnapshot snapshot = new CcSnapshot();

    public Simulator(SimulationConfig config) {
        this.config = config;
        this.bottleneck = new Bottleneck(config, events);
        this.returnPath = new ReturnPath(config, events);
        for (int i = 0; i < config.flows.size(); i++) {
            FlowConfig fc = config.flows.get(i);
            CongestionController cc = Algorithms.create(fc.algorithm, withSeed(fc, i));
            flows.add(new FlowSender(i, fc, cc, config, events, bottleneck, returnPath, snapshot));
        }
    }

    /** BBR variants take a seed; give each flow a distinct one derived from the run's seed. */
    private Map<String, String> withSeed(FlowConfig fc, int index) {
        if (fc.options.containsKey("seed")
                || !Algorithms.descriptor(fc.algorithm).options().containsKey("seed")) {
            return fc.options;
        }
        LinkedHashMap<String, String> m = new LinkedHashMap<>(fc.options);
        m.put("seed", Long.toString(config.seed * 31 + index));
        return m;
    }

    /** Runs to completion (all byte-counted flows done) or to the configured duration. */
    public SimulationResult run() {
        for (FlowSender f : flows) {
            events.schedule(f.config.startNanos, EventType.START, f.index, null);
        }
        for (RateChange rc : config.link.rateChanges()) {
            events.schedule(rc.atNanos, EventType.RATE_CHANGE, -1, rc);
        }
        events.schedule(0, EventType.SAMPLE, -1, null);
        long end = config.durationNanos > 0 ? config.durationNanos : Long.MAX_VALUE;
        while (!events.isEmpty()) {
            ScheduledEvent e = events.poll();
            if (e.time > end) {
                events.advanceTo(end);
                break;
            }
            events.advanceTo(e.time);
            dispatch(e);
            if (allDone()) {
                break;
            }
        }
        return ResultCollector.collect(flows, bottleneck, config, snapshot, events.now());
    }

    private boolean allDone() {
        for (FlowSender f : flows) {
            if (!f.done()) {
                return false;
            }
        }
        return config.durationNanos == 0 || flows.stream().allMatch(f -> f.config.bytes != Long.MAX_VALUE);
    }

    private void dispatch(ScheduledEvent e) {
        FlowSender f = e.flow >= 0 ? flows.get(e.flow) : null;
        switch (e.type) {
            case START:
                f.start();
                break;
            case SENDER_WAKE:
                // A wake superseded by an earlier one is stale: it may still try to send, but must
                // not clear the pending wake, or each stale wake would start another wake chain.
                if (e.time >= f.wakeScheduled) {
                    f.wakeScheduled = Long.MAX_VALUE;
                }
                f.trySend();
                break;
            case LINK_DEPART:
                bottleneck.onDeparture((Packet) e.payload);
                break;
            case DATA_ARRIVE:
                f.receiver.onData((Packet) e.payload);
                break;
            case ACK_TIMER:
                f.receiver.onAckTimer(e.seqToken);
                break;
            case ACK_ARRIVE:
                f.onAckFrame((AckFrame) e.payload);
                break;
            case LOSS_TIMER:
                f.onLossTimer(e.seqToken);
                break;
            case RATE_CHANGE:
                bottleneck.changeRate(((RateChange) e.payload).bitsPerSecond);
                break;
            case SAMPLE:
                sample();
                events.schedule(events.now() + config.sampleIntervalNanos, EventType.SAMPLE, -1, null);
                break;
            case AGGREGATION_RELEASE:
                returnPath.onReleaseTimer();
                break;
            case APP_WRITE:
                f.onAppWrite();
                break;
            default:
                throw new IllegalStateException("unknown event " + e.type);
        }
    }

    /** Hands the observer a state sample of every flow that is running. */
    private void sample() {
        long now = events.now();
        for (FlowSender f : flows) {
            if (f.started && !f.done()) {
                f.cc.snapshot(snapshot);
                snapshot.bytesInFlight = f.bytesInFlight;
                f.recordSample(now);
                config.observer.onSample(now, f.index, snapshot, bottleneck.queuedBytes(), f.rtt.latestRtt());
            }
        }
    }
}
