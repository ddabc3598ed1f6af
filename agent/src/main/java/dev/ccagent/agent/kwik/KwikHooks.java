package dev.ccagent.agent.kwik;

import dev.ccagent.agent.connection.LiveConnections;
import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.runtime.AgentRuntime;
import dev.ccagent.cc.CcOptions;
import tech.kwik.core.cc.CongestionControlEventListener;
import tech.kwik.core.cc.CongestionController;

import java.time.Instant;

/**
 * The static entry points kwik's instrumented code calls. Public because advice is inlined into
 * kwik's classes; every method catches every {@link Throwable}, because an exception here would
 * surface inside kwik's constructor or receiver loop; a failure after the swap hands the connection
 * back to kwik's controller.
 */
public final class KwikHooks {

    private KwikHooks() {
    }

    /**
     * After {@code SenderImpl}'s constructor: decide the connection's arm and, unless it is stock,
     * swap our adapter in for the NewReno kwik just created.
     *
     * @param id the hex original destination connection id on servers, "" on clients
     */
    public static void onSenderCreated(Object sender, String id, int maxPacketSize) {
        KwikControllerAdapter adapter = null;
        KwikConnectionSelector selector = null;
        KwikConnectionSelector.Choice choice = null; // servers: counted only once the connection runs it
        try {
            AgentConfig config = AgentRuntime.config();
            // counters for the detector/JFR and the per-connection measurement, stock arms too
            boolean observe = config != null && (config.detect() || config.canary().measure());
            if (config == null || !(config.injectsAnything() || observe)
                    || !(sender instanceof CongestionControlEventListener)) {
                return;
            }
            boolean server = id != null && !id.isEmpty();
            selector = new KwikConnectionSelector(config, server ? "server" : "client");
            dev.ccagent.cc.CongestionController cc = null;
            AgentConfig.Arm arm = null;
            if (server) {
                choice = selector.choose(KwikReflection.hexToBytes(id), maxPacketSize);
                if (choice.controller == null && !observe) {
                    runs(selector, choice);
                    return; // stock arm: kwik's own controller stays, untouched
                }
                cc = choice.controller;
                arm = choice.arm;
            }
            long initialRtt = arm != null && !arm.isStock() ? arm.options().initialRttNanos()
                    : initialRttOf(config);
            adapter = new KwikControllerAdapter(sender, (CongestionControlEventListener) sender,
                    maxPacketSize, selector, cc, arm, initialRtt);
            CongestionController stock;
            try {
                stock = KwikReflection.swapController(sender, adapter);
            } catch (Throwable t) {
                // all or nothing: kwik's controller is still in every slot and nothing of the agent holds
                // this connection (the meter, the spin watch and the live table are joined only below)
                swapFailed(t);
                ranStockInstead(selector, choice, "swap failed", t, false);
                return;
            }
            adapter.setStock(stock);
            if (arm != null && arm.isStock()) {
                adapter.observeStock(arm); // kwik's controller decides; the adapter only counts
            }
            KwikTelemetry.attach(adapter, sender, id);
            LiveConnections.register(adapter);
            adapter.meter().meter().register(); // last: held strongly until the connection closes
            if (choice != null) {
                runs(selector, choice);
                choice = null; // counted: a failure below must not count it again as stock
            }
            if (AgentRuntime.config() == null) {
                adapter.switchToStock(); // detached while this connection was being made
                adapter.meter().meter().detached();
            }
        } catch (Throwable t) {
            if (adapter != null && adapter.hasStock()) {
                adapter.fallBack("injection", t); // swapped in already: hand the connection back, counted
                ranStockInstead(selector, choice, "injection failed", t, true); // fallBack recorded it
            } else {
                swapFailed(t);
                ranStockInstead(selector, choice, "injection failed", t, false);
            }
        }
    }

    /**
     * A server connection runs what was chosen: counted, recorded and logged; a failure here leaves the
     * connection on its algorithm, uncounted, and is itself counted as a fallback.
     */
    private static void runs(KwikConnectionSelector selector, KwikConnectionSelector.Choice choice) {
        try {
            selector.runs(choice);
        } catch (Throwable t) {
            try {
                AgentRuntime.recordFallback("kwik connection accounting", "the connection runs "
                        + choice.arm.label() + ":" + choice.arm.algorithm()
                        + " but is not counted, recorded in JFR or logged", t);
            } catch (Throwable ignored) {
                // not even a log line
            }
        }
    }

    /** A server connection chosen for an arm runs kwik's controller from its start: counted as that. */
    private static void ranStockInstead(KwikConnectionSelector selector, KwikConnectionSelector.Choice choice,
                                        String why, Throwable cause, boolean recorded) {
        if (selector == null || choice == null) {
            return; // a client (chooses later, on its first use) or nothing chosen yet
        }
        try {
            selector.runsStockInstead(choice, why, cause, recorded);
        } catch (Throwable ignored) {
            // the count is lost; the connection runs kwik's controller either way
        }
    }

    /** Nothing was swapped: the connection keeps kwik's controller; counted as a fallback, logged once per cause. */
    private static void swapFailed(Throwable t) {
        try {
            AgentRuntime.recordFallback("kwik controller injection",
                    "this connection continues with the stock algorithm (kwik's own controller, nothing swapped)", t);
        } catch (Throwable ignored) {
            // kwik's controller stays; not even a log line is possible
        }
    }

    private static long initialRttOf(AgentConfig config) {
        CcOptions o = config.defaultArm().options();
        return o != null ? o.initialRttNanos() : 333_000_000L;
    }

    /**
     * Before {@code LossDetector.packetSent}, which registers the packet with our adapter next on the same
     * thread: kwik's send stamp of it. Never throws.
     */
    public static void onPacketSent(Object controller, tech.kwik.core.packet.QuicPacket packet, Instant timeSent) {
        if (controller instanceof KwikControllerAdapter) {
            ((KwikControllerAdapter) controller).stampSent(packet, timeSent);
        }
    }

    /**
     * Before {@code LossDetector.onAckReceived}: hands the ACK's receive time and delay to our
     * adapter, which kwik's {@code registerAcked} call then uses.
     */
    public static void onAckReceived(Object controller, Instant timeReceived, long largestAcknowledged,
                                     int ackDelayMillis) {
        if (controller instanceof KwikControllerAdapter) {
            KwikControllerAdapter adapter = (KwikControllerAdapter) controller;
            try {
                adapter.onAckFrame(timeReceived, largestAcknowledged, ackDelayMillis);
            } catch (Throwable t) {
                adapter.fallBack("ack timing", t); // without ACK times our controller has no RTT samples
            }
        }
    }
}
