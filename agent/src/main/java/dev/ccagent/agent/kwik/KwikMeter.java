package dev.ccagent.agent.kwik;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.connection.LiveConnections;
import dev.ccagent.agent.detect.SpinDetector;
import dev.ccagent.agent.measure.ConnectionMeter;
import dev.ccagent.cc.CcSnapshot;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.matcher.ElementMatcher;
import tech.kwik.core.common.PnSpace;
import tech.kwik.core.packet.PacketInfo;
import tech.kwik.core.packet.QuicPacket;

import java.util.List;

import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

/**
 * The kwik side of a connection's {@link ConnectionMeter}: {@link KwikControllerAdapter} hands it
 * every call kwik makes, before our controller or kwik's own sees it, so every arm is measured by
 * the same code. Times are the adapter's {@link KwikPacketTimes}: kwik's stamps converted to
 * {@link System#nanoTime()} one by one while they are fresh, so that wall-clock steps leave the RTT
 * samples alone.
 *
 * <p>The connection's end: kwik 0.10.x calls {@code SenderImpl.stop()} on every close path (idle
 * timeout, local close, peer close, draining, abort; see {@code QuicConnectionImpl}), so advice on its
 * exit writes the final summary and ends the spin detector's last window of the connection.
 */
public final class KwikMeter implements ConnectionMeter.Owner {

    private final KwikControllerAdapter adapter;
    private final ConnectionMeter meter;
    private final CcSnapshot scratch = new CcSnapshot();

    KwikMeter(KwikControllerAdapter adapter) {
        this.adapter = adapter;
        this.meter = new ConnectionMeter("kwik", this);
    }

    public ConnectionMeter meter() {
        return meter;
    }

    // ---------------------------------------------------------------- from the adapter (hot: no allocation)

    /** kwik's sender registers {@code packet}, sent at {@code sent} ({@link KwikPacketTimes#sent}). */
    void sent(QuicPacket packet, long sent) {
        try {
            if (!meter.bound()) {
                bind();
            }
            meter.sent(sent, packet.getSize(), packet.getPnSpace() == PnSpace.App);
        } catch (Throwable ignored) {
            // measurement must never break the connection
        }
    }

    /** An ACK frame received at {@code receiveTime} ({@link KwikPacketTimes#ackReceived}) is about to be processed. */
    void ackFrame(long receiveTime, long largestAcknowledged, int ackDelayMillis) {
        try {
            meter.ackFrame(receiveTime, largestAcknowledged, Math.max(0, ackDelayMillis) * 1_000_000L);
        } catch (Throwable ignored) {
            // measurement must never break the connection
        }
    }

    /** {@code sendTimes}: the adapter's send times of {@code acked}, by index ({@link KwikPacketTimes#take}). */
    void acked(List<? extends PacketInfo> acked, KwikPacketTimes.Taken sendTimes) {
        try {
            long now = System.nanoTime();
            for (int i = 0, n = acked.size(); i < n; i++) {
                QuicPacket p = acked.get(i).packet();
                long pn = KwikReflection.packetNumber(p);
                // a packet the table lost, or whose stamp was not trusted, gives no RTT sample
                // (Long.MIN_VALUE is the meter's "none")
                meter.acked(pn, sendTimes.rttSample(i) ? Math.min(now, sendTimes.at(i)) : Long.MIN_VALUE, p.getSize());
            }
            meter.ackDone(now);
        } catch (Throwable ignored) {
            // measurement must never break the connection
        }
    }

    void lost(List<? extends PacketInfo> lost) {
        try {
            for (int i = 0, n = lost.size(); i < n; i++) {
                meter.lost(lost.get(i).packet().getSize());
            }
        } catch (Throwable ignored) {
            // measurement must never break the connection
        }
    }

    void discarded(List<? extends PacketInfo> discarded) {
        try {
            for (int i = 0, n = discarded.size(); i < n; i++) {
                meter.discarded(discarded.get(i).packet().getSize());
            }
        } catch (Throwable ignored) {
            // measurement must never break the connection
        }
    }

    void reset() {
        meter.resetFlight();
    }

    private void bind() {
        AgentConfig.Arm arm = adapter.arm();
        if (arm != null) {
            meter.bind("kwik", arm.label(), arm.algorithm());
            adapter.telemetry().arm = meter.arm();
        }
    }

    // ---------------------------------------------------------------- ConnectionMeter.Owner (per summary)

    @Override
    public String connectionId() {
        String id = adapter.telemetry().connectionId();
        return id != null ? id : "";
    }

    @Override
    public String role() {
        String r = adapter.telemetry().role();
        return r != null ? r : "";
    }

    @Override
    public String algorithm() {
        String ran = adapter.detachedFrom();
        return ran != null ? ran : adapter.algorithm(); // a detach's summary covers the time on ours
    }

    @Override
    public String controller() {
        AgentConfig.Arm arm = adapter.arm();
        if (arm == null || arm.isStock()) {
            return AgentConfig.STOCK;
        }
        if (adapter.detachedFrom() != null) {
            return "detached"; // ours until the detach, kwik's from then on: no failure
        }
        return AgentConfig.STOCK.equals(adapter.algorithm()) ? "fallback" : "ccagent";
    }

    @Override
    public ConnectionMeter.SlowStart controllerSlowStart() {
        synchronized (scratch) {
            CcSnapshot s = adapter.snapshot(scratch);
            if (s == null || s.mode == null) {
                return ConnectionMeter.SlowStart.UNKNOWN; // kwik's own controller (stock or a fallback)
            }
            return s.mode.isStartup() ? ConnectionMeter.SlowStart.IN : ConnectionMeter.SlowStart.LEFT;
        }
    }

    // ---------------------------------------------------------------- the close hook

    static AgentBuilder extend(AgentBuilder builder, ElementMatcher<ClassLoader> loaderCheck) {
        return builder
                .type(KwikModule.typeThenLoader(named(KwikReflection.SENDER_IMPL), loaderCheck))
                .transform(KwikModule.agentAdvice()
                        .advice(named("stop").and(takesArguments(0)), StopAdvice.class.getName()));
    }

    /** Inlined at the end of {@code SenderImpl.stop()}. */
    public static final class StopAdvice {
        private StopAdvice() {
        }

        @Advice.OnMethodExit(suppress = Throwable.class, onThrowable = Throwable.class)
        static void exit(@Advice.FieldValue("congestionController") Object cc) {
            KwikMeter.senderStopped(cc);
        }
    }

    /** The connection closed (any path): its final summary. */
    public static void senderStopped(Object cc) {
        if (cc instanceof KwikControllerAdapter) {
            KwikControllerAdapter adapter = (KwikControllerAdapter) cc;
            try {
                LiveConnections.closed(adapter);
            } catch (Throwable ignored) {
                // never break kwik's close
            }
            try {
                adapter.meter().meter().close();
            } catch (Throwable ignored) {
                // never break kwik's close
            }
            // the detector's last window ends here, while the sender thread still runs (shutdown() ends it later)
            SpinDetector.connectionClosed(adapter.telemetry(), adapter.algorithm());
        }
    }
}
