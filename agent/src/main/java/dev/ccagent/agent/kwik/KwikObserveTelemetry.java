package dev.ccagent.agent.kwik;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.connection.SendTelemetry;
import dev.ccagent.agent.detect.SpinDetector;
import dev.ccagent.agent.runtime.AgentRuntime;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;

/**
 * The send-loop counters of kwik observe-only ({@link KwikObserveModule}): where the controller swap cannot apply
 * there is no adapter to keep a connection's {@link SendTelemetry}, so this side table keeps one per
 * {@code SenderImpl} and hands it to the window detector ({@link SpinDetector#addSource}) and the CPU spin
 * monitor ({@link KwikSpinWatch}). The hooks that feed it, each type in its own file with its own requirements
 * ({@link KwikObserveModule#WINDOW}):
 * <ul>
 *   <li>{@link KwikObserveSenderLoop} ({@code SenderImpl}): sender-loop iterations and whether they sent a
 *       datagram, datagrams, received packets, the close;</li>
 *   <li>{@link KwikObserveController} (kwik's {@code AbstractCongestionController}): packets registered in
 *       flight and their bytes (ACK-only datagrams are datagrams minus these, as with the swap), and the
 *       window's "no room" answers;</li>
 *   <li>{@link KwikObserveStreamPulls} ({@code StreamOutputStreamImpl.sendFrame}): a stream asked for a frame
 *       that answers with none, counted as an empty turn of the send loop. kwik 0.10.0-0.10.3 spin there,
 *       inside one loop iteration (docs/cpu-spin.md, "The real loop it was built on"): the iteration never
 *       ends, so iterations alone would show nothing.</li>
 * </ul>
 *
 * <p>Hot path: no allocation and no lock on the sender thread. A sender thread serves one connection for its
 * whole life (kwik starts one per {@code SenderImpl}), so its connection is found through a {@link ThreadLocal}
 * set at its first loop iteration (one look-up in the side table per connection). Only the received-packet
 * hook, on the receiver thread (shared by a server's connections), looks the sender up in the side table:
 * one uncontended lock, no allocation. Fail open: a hook that throws stops its connection's counters, logs once
 * and leaves kwik alone (the advice suppresses anything else).
 */
public final class KwikObserveTelemetry {

    /** One observed connection: its counters, and whether they stopped after a failure. */
    static final class Observed {
        final SendTelemetry telemetry = new SendTelemetry("kwik", true);
        volatile boolean off;
    }

    /** Marks a thread that runs the send loop of a sender this table does not know (created before tracking). */
    private static final Observed NONE = new Observed();

    /** Sender (weakly) to its counters. */
    private static final Map<Object, Observed> SENDERS = new WeakHashMap<>();
    /** Loaders where the window hooks' requirements hold (weakly). */
    private static final Map<ClassLoader, Boolean> LOADERS = new WeakHashMap<>();
    /** The sender-loop thread's connection (set at its first iteration). */
    private static final ThreadLocal<Observed> CURRENT = new ThreadLocal<>();
    /** Kept here: the detector holds its sources weakly. */
    private static final SpinDetector.TelemetrySource SOURCE = KwikObserveTelemetry::forEach;
    private static boolean sourceAdded;

    private KwikObserveTelemetry() {
    }

    /** The module's verdict for a loader: its window hooks run there. */
    static void windowIn(ClassLoader loader) {
        synchronized (LOADERS) {
            LOADERS.put(loader, Boolean.TRUE);
        }
    }

    static boolean windowApplies(ClassLoader loader) {
        synchronized (LOADERS) {
            return LOADERS.containsKey(loader);
        }
    }

    /**
     * A new sender where observe-only applies (from {@link KwikObserveModule}'s constructor advice): watched by the
     * CPU spin monitor, and by the window detector where the window hooks run in its loader.
     */
    static void senderCreated(Object sender, String id) {
        AgentConfig config = AgentRuntime.config();
        if (config == null || !config.detect()) {
            return;
        }
        if (!windowApplies(sender.getClass().getClassLoader())) {
            KwikSpinWatch.track(sender, id, null);
            return;
        }
        KwikSpinWatch.track(sender, id, track(sender, id));
    }

    /** Adds the sender to the side table (and the table to the detector's sources); returns its counters. */
    static SendTelemetry track(Object sender, String id) {
        Observed o = new Observed();
        identify(o.telemetry, sender, id);
        synchronized (SENDERS) {
            if (!sourceAdded) {
                sourceAdded = true;
                SpinDetector.addSource(SOURCE);
            }
            SENDERS.put(sender, o);
        }
        return o.telemetry;
    }

    /** The sender's counters while it is observed (tests). */
    static SendTelemetry telemetryOf(Object sender) {
        Observed o = lookUp(sender);
        return o != null ? o.telemetry : null;
    }

    /** Server: the id is known now; client: resolved on first use (weakly, as {@link KwikTelemetry#attach}). */
    private static void identify(SendTelemetry t, Object sender, String id) {
        boolean server = id != null && !id.isEmpty();
        t.setRole(server ? "server" : "client");
        if (server) {
            t.setConnectionId(id);
        } else {
            WeakReference<Object> weak = new WeakReference<>(sender);
            t.setIdResolver(() -> {
                Object s = weak.get();
                return s != null ? KwikReflection.connectionIdHexOfSender(s) : null;
            });
        }
    }

    /** The number of connections observed (tests). */
    static int observed() {
        synchronized (SENDERS) {
            return SENDERS.size();
        }
    }

    private static Observed lookUp(Object sender) {
        synchronized (SENDERS) {
            return SENDERS.get(sender);
        }
    }

    // ---------------------------------------------------------------- hooks (hot: no allocation)

    /** Start of a sender-loop iteration (sender thread); returns the datagram count to compare at its end. */
    public static long loopEnter(Object sender) {
        Observed o = CURRENT.get();
        if (o == null) {
            o = lookUp(sender); // once per sender thread
            CURRENT.set(o != null ? o : NONE);
        }
        if (o == null || o == NONE || o.off) {
            return 0;
        }
        try {
            return o.telemetry.loopEnter();
        } catch (Throwable t) {
            failed(o, t);
            return 0;
        }
    }

    public static void loopExit(long datagramsBefore) {
        Observed o = onSenderThread();
        if (o != null) {
            try {
                o.telemetry.loopExit(datagramsBefore);
            } catch (Throwable t) {
                failed(o, t);
            }
        }
    }

    public static void datagramSent() {
        Observed o = onSenderThread();
        if (o != null) {
            try {
                o.telemetry.datagramSent();
            } catch (Throwable t) {
                failed(o, t);
            }
        }
    }

    /** A packet kwik's controller registered in flight (sender thread). */
    public static void packetInFlight(int bytes) {
        Observed o = onSenderThread();
        if (o != null) {
            try {
                o.telemetry.packetInFlight(bytes);
            } catch (Throwable t) {
                failed(o, t);
            }
        }
    }

    /** kwik's controller answered {@code remainingCwnd()} (sender thread): no room counts as a refusal. */
    public static void remainingCwnd(long answer) {
        if (answer > 0) {
            return;
        }
        Observed o = onSenderThread();
        if (o != null) {
            try {
                o.telemetry.windowRefused();
            } catch (Throwable t) {
                failed(o, t);
            }
        }
    }

    /**
     * A stream answered the sender's request for a frame (sender thread); {@code nothing}: with none. A request that
     * yields nothing is a turn of the send loop that sent nothing: one wake-up, empty. (Counted once more at the
     * iteration's end when the whole iteration sent nothing: it was a turn of its own.)
     */
    public static void framePulled(boolean nothing) {
        if (!nothing) {
            return;
        }
        Observed o = onSenderThread();
        if (o != null) {
            try {
                o.telemetry.loopExit(o.telemetry.loopEnter()); // a turn entered and left with no datagram: empty
            } catch (Throwable t) {
                failed(o, t);
            }
        }
    }

    /** A packet received for {@code sender} (receiver thread: the side table, not the thread, names the connection). */
    public static void packetReceived(Object sender) {
        Observed o = lookUp(sender);
        if (o != null && !o.off) {
            try {
                o.telemetry.packetReceived();
            } catch (Throwable t) {
                failed(o, t);
            }
        }
    }

    /** {@code SenderImpl.stop()} (any close path): the last window ends here, while the sender thread still runs. */
    public static void senderStopped(Object sender) {
        Observed o;
        synchronized (SENDERS) {
            o = SENDERS.remove(sender);
        }
        if (o != null) {
            SpinDetector.connectionClosed(o.telemetry, AgentConfig.STOCK);
        }
    }

    /** The sender thread's connection when its counters run; null elsewhere (another thread, unknown, stopped). */
    private static Observed onSenderThread() {
        Observed o = CURRENT.get();
        return o == null || o == NONE || o.off ? null : o;
    }

    private static void failed(Observed o, Throwable cause) {
        o.off = true;
        AgentRuntime.recordFallback("kwik observe (send-loop window)", "the connection's send-loop counters stop;"
                + " kwik runs as it would without the agent", cause);
    }

    // ---------------------------------------------------------------- the detector's side (its thread)

    private static void forEach(java.util.function.BiConsumer<String, SendTelemetry> action) {
        List<Observed> live;
        synchronized (SENDERS) {
            live = new ArrayList<>(SENDERS.values());
        }
        for (Observed o : live) {
            if (!o.off) {
                action.accept(AgentConfig.STOCK, o.telemetry);
            }
        }
    }
}
