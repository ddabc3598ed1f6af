package dev.ccagent.it.netty;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Pacing seen from outside the pacer: datagram writes at the server's UDP socket (the app's
 * {@code WRITES} recorder sits closest to the socket, after the pacer) and the emulator's bottleneck
 * queue ({@code EMULATOR}). The pacer's own counters are not evidence.
 *
 * <p>Measured at load average 22-27 on 2 cores, bbr, paced / unpaced: Reactor Netty, 20 Mbit/s, 40 ms,
 * 1% loss: maxPerMs 6 / 56, backToBackPct 0.6 / 62.5, emulator droppedQueue 0 / 46, maxBacklogBytes
 * 11883 / 99993 (the full 1-BDP buffer); second run: maxPerMs 15 / 46, backToBackPct 28.5 / 66.3; third:
 * maxPerMs 12 / 36, backToBackPct 33.8 / 61.6, droppedQueue 12 / 82;
 * NettyBulkApp, 10 Mbit/s, 40 ms, no loss: maxPerMs 5 / 17,
 * backToBackPct 0.7 / 28.7, droppedQueue 2 / 60, maxBacklogBytes 49397 / 49973.
 */
final class PacingEvidence {

    private PacingEvidence() {
    }

    static String figures(NettyApp.Run r) {
        return r.lines("WRITES") + " " + r.lines("EMULATOR");
    }

    /** {@code on} paced, {@code off} not: same link, same algorithm. */
    static void assertPaced(NettyApp.Run on, NettyApp.Run off) {
        double perMsOn = QuicheEvidence.figure(on, "WRITES", "maxPerMs");
        double perMsOff = QuicheEvidence.figure(off, "WRITES", "maxPerMs");
        double backlogOn = QuicheEvidence.figure(on, "EMULATOR", "maxBacklogBytes");
        double backlogOff = QuicheEvidence.figure(off, "EMULATOR", "maxBacklogBytes");
        double dropsOn = QuicheEvidence.figure(on, "EMULATOR", "droppedQueue");
        double dropsOff = QuicheEvidence.figure(off, "EMULATOR", "droppedQueue");
        String all = "\npaced:   " + figures(on) + "\nunpaced: " + figures(off);
        System.out.println("pacing evidence:" + all);
        // back-to-back writes (backToBackPct) are printed, not asserted: on a loaded machine a late timer
        // releases the due datagrams together (up to netty.pacing.max-burst), paced or not
        // the densest millisecond at the socket: at most half the unpaced one
        assertTrue(perMsOn * 2 <= perMsOff, "paced bursts should be smaller:" + all);
        // the bottleneck queue: paced arrivals overflow it at most half as often, and less in total
        assertTrue(dropsOn * 2 <= dropsOff && (dropsOn < dropsOff || backlogOn < backlogOff),
                "the emulator's queue should overflow less:" + all);
    }
}
