package dev.ccagent.agent.netty;

import dev.ccagent.agent.connection.SendTelemetry;

/**
 * The send-loop counters of each Netty QUIC connection (its {@link SendTelemetry}, found through the
 * channel's attribute): one lookup and a few plain increments per call on the event loop, no
 * allocation. Read by the spin detector.
 */
final class NettySendLoopTelemetry {

    // One attribute lookup and a few plain long increments per call on the event loop; no allocation.

    /** Start of {@code connectionSend} that runs: the datagram count to compare at its end, or -1. */
    static long sendEnter(Object channel) {
        try {
            SendTelemetry t = NettyLinkage.linked(channel) ? NettyConnections.telemetryOf(channel) : null;
            return t != null ? t.loopEnter() : -1;
        } catch (Throwable t) {
            return -1;
        }
    }

    /** End of a {@code connectionSend} that ran (also when it threw). */
    static void sendExit(Object channel, long datagramsBefore) {
        NettyPacingHooks.endSendLoop();
        if (datagramsBefore < 0) {
            return;
        }
        try {
            SendTelemetry t = NettyLinkage.linked(channel) ? NettyConnections.telemetryOf(channel) : null;
            if (t != null) {
                t.loopExit(datagramsBefore);
            }
        } catch (Throwable ignored) {
            // counters only
        }
    }

    /** {@code writePacket}: a datagram from quiche's send loop goes to the UDP channel. */
    static void datagramWritten(Object channel) {
        try {
            SendTelemetry t = NettyLinkage.linked(channel) ? NettyConnections.telemetryOf(channel) : null;
            if (t != null) {
                t.datagramSent();
            }
        } catch (Throwable ignored) {
            // counters only
        }
    }

    /**
     * {@code recv}: a datagram for this connection. Counted without the receiver-thread id: Netty
     * receives on the same event-loop thread it sends on, whose allocation the sender path reports.
     */
    static void datagramReceived(Object channel) {
        try {
            SendTelemetry t = NettyLinkage.linked(channel) ? NettyConnections.telemetryOf(channel) : null;
            if (t != null) {
                t.packetsReceived++;
            }
        } catch (Throwable ignored) {
            // counters only
        }
    }

    private NettySendLoopTelemetry() {
    }
}
