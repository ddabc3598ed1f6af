package dev.ccagent.it.netty;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Pacing seen from outside the pacer: datagram writes at the server's UDP socket (the app's
 * {@code WRITES} recorder sits closest to the socket, after the pacer) and the emulator's bottleneck
 * queue ({@code EMULATOR}). The pacer's own counters are not evidence.
 *
 * <p>Measured (load average 22-25, 2 cores; Reactor Netty, bbr, 20 Mbit/s, 40 ms, 1%): paced
 * maxPerMs=6, backToBackPct=0.6, emulator maxBacklogBytes=11883, droppedQueue=0; unpaced maxPerMs=56,
 * backToBackPct=62.5, maxBacklogBytes=99993 (the full 1-BDP buffer), droppedQueue=46.
 */
final class PacingEvidence {

    private PacingEvidence() {
    }

    static String figures(NettyApp.Run r) {
        return r.lines("WRITES") + " " + r.lines("EMULATOR");
    }

    /** {@code on} paced, {@code off} not: same link, same algorithm. */
    static void assertPaced(NettyApp.Run on, NettyApp.Run off) {
        double b2bOn = QuicheEvidence.figure(on, "WRITES", "backToBackPct");
        double b2bOff = QuicheEvidence.figure(off, "WRITES", "backToBackPct");
        double perMsOn = QuicheEvidence.figure(on, "WRITES", "maxPerMs");
        double perMsOff = QuicheEvidence.figure(off, "WRITES", "maxPerMs");
        double backlogOn = QuicheEvidence.figure(on, "EMULATOR", "maxBacklogBytes");
        double backlogOff = QuicheEvidence.figure(off, "EMULATOR", "maxBacklogBytes");
        double dropsOn = QuicheEvidence.figure(on, "EMULATOR", "droppedQueue");
        double dropsOff = QuicheEvidence.figure(off, "EMULATOR", "droppedQueue");
        String all = "\npaced:   " + figures(on) + "\nunpaced: " + figures(off);
        System.out.println("pacing evidence:" + all);
        // unpaced, Netty writes quiche's datagrams back to back; paced, almost never (< 20 µs apart)
        assertTrue(b2bOff >= 25, "unpaced writes should be bursty:" + all);
        assertTrue(b2bOn <= 15 && b2bOn * 2 <= b2bOff, "paced writes should be spaced:" + all);
        // the densest millisecond at the socket: at most half the unpaced one
        assertTrue(perMsOn * 2 <= perMsOff, "paced bursts should be smaller:" + all);
        // the bottleneck queue: paced arrivals build less of it and overflow it no more often
        assertTrue(backlogOn < backlogOff && dropsOn <= dropsOff, "the emulator's queue should be shorter:" + all);
    }
}
