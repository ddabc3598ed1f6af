package dev.ccagent.agent.kwik;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.connection.SendTelemetry;
import dev.ccagent.agent.jfr.CcJfr;
import dev.ccagent.cc.CongestionController;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.matcher.ElementMatcher;

import java.util.List;

import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArgument;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

/**
 * kwik's send-path counters for the spin detector and the JFR events, kept apart from the controller
 * swap. Advice on {@code SenderImpl} (inlined, so everything it calls is public):
 * <ul>
 *   <li>{@code doLoopIteration()}: one sender-loop wake-up; "empty" when no datagram left during it;</li>
 *   <li>{@code send(List<SendItem>)}: one datagram handed to the socket (ACK-only datagrams are
 *       datagrams minus packets registered in flight: kwik's {@code isAckOnly()} would allocate);</li>
 *   <li>{@code packetProcessed(boolean)}: one received packet (receiver thread), which also wakes the
 *       sender once, legitimately.</li>
 * </ul>
 * The counters live in the connection's {@link KwikControllerAdapter} (read with
 * {@code @Advice.FieldValue("congestionController")}: no lookup per packet), which is why the agent
 * installs the adapter in its pass-through mode on stock connections when detection is on. A hook
 * that fails stops the counters of its connection and hands it to kwik's controller (fail open).
 */
public final class KwikTelemetry {

    private KwikTelemetry() {
    }

    static AgentBuilder extend(AgentBuilder builder, ElementMatcher<ClassLoader> loaderCheck) {
        return builder
                .type(KwikModule.typeThenLoader(named(KwikReflection.SENDER_IMPL), loaderCheck))
                .transform(senderLoopAdvice(LoopAdvice.class, SendAdvice.class, ReceivedAdvice.class));
    }

    /**
     * The advice on {@code SenderImpl}'s send loop (an iteration, a datagram handed to the socket, a received
     * packet), as this class and kwik observe-only ({@link KwikObserveSenderLoop}) place their own.
     */
    static AgentBuilder.Transformer.ForAdvice senderLoopAdvice(Class<?> loop, Class<?> send, Class<?> received) {
        return KwikModule.agentAdvice()
                .advice(named("doLoopIteration").and(takesArguments(0)), loop.getName())
                .advice(named("send").and(takesArguments(1)).and(takesArgument(0, List.class)), send.getName())
                .advice(named("packetProcessed").and(takesArguments(1)), received.getName());
    }

    // ---------------------------------------------------------------- advice (inlined into SenderImpl)

    public static final class LoopAdvice {
        private LoopAdvice() {
        }

        @Advice.OnMethodEnter(suppress = Throwable.class)
        static long enter(@Advice.FieldValue("congestionController") Object cc) {
            return KwikTelemetry.loopEnter(cc);
        }

        @Advice.OnMethodExit(suppress = Throwable.class, onThrowable = Throwable.class)
        static void exit(@Advice.FieldValue("congestionController") Object cc, @Advice.Enter long before) {
            KwikTelemetry.loopExit(cc, before);
        }
    }

    public static final class SendAdvice {
        private SendAdvice() {
        }

        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.FieldValue("congestionController") Object cc) {
            KwikTelemetry.datagramSent(cc);
        }
    }

    public static final class ReceivedAdvice {
        private ReceivedAdvice() {
        }

        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.FieldValue("congestionController") Object cc) {
            KwikTelemetry.packetReceived(cc);
        }
    }

    // ---------------------------------------------------------------- hooks (hot: no allocation)

    public static long loopEnter(Object cc) {
        KwikControllerAdapter a = counting(cc);
        if (a != null) {
            try {
                return a.telemetry().loopEnter();
            } catch (Throwable t) {
                a.telemetryFailed(t);
            }
        }
        return 0;
    }

    public static void loopExit(Object cc, long before) {
        KwikControllerAdapter a = counting(cc);
        if (a != null) {
            try {
                a.telemetry().loopExit(before);
            } catch (Throwable t) {
                a.telemetryFailed(t);
            }
        }
    }

    public static void datagramSent(Object cc) {
        count(cc, false);
    }

    public static void packetReceived(Object cc) {
        count(cc, true);
    }

    /** Counts a packet received, or else a datagram sent. */
    private static void count(Object cc, boolean received) {
        KwikControllerAdapter a = counting(cc);
        if (a != null) {
            try {
                if (received) {
                    a.telemetry().packetReceived();
                } else {
                    a.telemetry().datagramSent();
                }
            } catch (Throwable t) {
                a.telemetryFailed(t);
            }
        }
    }

    /** {@code cc} when it is our adapter and its counters run; null for kwik's own controller or stopped counters. */
    private static KwikControllerAdapter counting(Object cc) {
        if (cc instanceof KwikControllerAdapter) {
            KwikControllerAdapter a = (KwikControllerAdapter) cc;
            return a.telemetryOff() ? null : a;
        }
        return null;
    }

    // ---------------------------------------------------------------- adapter callbacks

    /** A new connection's adapter: its id (server: known now; client: resolved on first use). */
    static void attach(KwikControllerAdapter adapter, Object sender, String id) {
        SendTelemetry t = adapter.telemetry();
        boolean server = id != null && !id.isEmpty();
        KwikSpinWatch.track(sender, id, t); // the CPU spin monitor reads kwik's own counters
        t.setRole(server ? "server" : "client");
        if (server) {
            t.setConnectionId(id);
        } else {
            // weakly: the telemetry is also a value of the spin watch's weak map keyed by this sender, and a
            // value that held its key would keep the connection, and its class loader, for ever
            java.lang.ref.WeakReference<Object> weak = new java.lang.ref.WeakReference<>(sender);
            t.setIdResolver(() -> {
                Object s = weak.get();
                return s != null ? KwikReflection.connectionIdHexOfSender(s) : null;
            });
        }
    }

    /** The selector chose an arm for a connection. */
    static void assigned(String role, byte[] connectionId, AgentConfig.Arm arm) {
        CcJfr.algorithmAssigned("kwik", connectionId != null ? KwikConnectionSelector.hex(connectionId) : "", role,
                arm, null);
    }

    /** The selector chose an arm, but the connection runs kwik's controller from its start (a failed swap). */
    static void ranStockInstead(String role, byte[] connectionId, AgentConfig.Arm arm, String why, Throwable cause) {
        CcJfr.algorithmAssigned("kwik", connectionId != null ? KwikConnectionSelector.hex(connectionId) : "", role,
                arm, "fallback to stock: " + why + ": " + cause);
    }

    /** Our controller failed and kwik's took over. */
    static void fellBack(KwikControllerAdapter adapter, String where, Throwable cause) {
        SendTelemetry t = adapter.telemetry();
        adapter.meter().meter().fellBack();
        CcJfr.algorithmAssigned("kwik", t.connectionId(), t.role(), adapter.arm(),
                "fallback to stock after an error in " + where + ": " + cause);
    }

    /** After an ACK or loss changed our controller's state (caller holds the adapter's lock). */
    static void afterUpdate(KwikControllerAdapter adapter, CongestionController cc, long bytesInFlight) {
        CcJfr.afterUpdate(adapter.telemetry(), cc, bytesInFlight, adapter.arm());
    }

    /** The controller allowed a packet (caller holds the adapter's lock). */
    static void allowed(KwikControllerAdapter adapter, CongestionController cc, long now) {
        SendTelemetry t = adapter.telemetry();
        long held = t.allowed(now);
        if (held >= 0) {
            CcJfr.maybePacingStall(t, cc, held, t.lastAnnouncedWait());
        }
    }
}
