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
 * backToBackPct 0.7 / 28.7, droppedQueue 2 / 60, maxBacklogBytes 49397 / 49973. Quiet machine (load ~9),
 * NettyBulkApp: maxPerMs 6 / 10, droppedQueue 24 / 58, bottleneck queue p50 1.7 / 38.2 ms; Reactor at 1%
 * loss: maxPerMs 15 / 31, droppedQueue 73 / 93, queue p50 16.6 / 32.2 ms.
 */
final class PacingEvidence {

    private PacingEvidence() {
    }

    static String figures(NettyApp.Run r) {
        return r.lines("WRITES") + " " + r.lines("EMULATOR");
    }

    /**
     * At the socket only: the densest millisecond of writes is smaller when paced. For links with random
     * loss, where quiche's BBR keeps the bottleneck queue about as full paced as unpaced (Reactor at 1%
     * loss, quiet machine: queue p50 25.4 / 25.2 ms, drops 30 / 40, while the socket showed 14 / 25 per ms).
     * Odds: {@code NettyChildLoaderTest}'s pairs on a clean link in 13 clean-clone gate runs (2026-12-04):
     * paced 4-7, unpaced 10-18, then one at 7 / 7 (that test now uses {@link #checkPaced} with up to three
     * pairs); a late timer can release up to 12 at once (netty.pacing.max-burst), so one pair is not below
     * 1e-4 by its margin alone: a rough 1e-3 a pair. Used by an acceptance test only.
     */
    static void assertPacedAtSocket(NettyApp.Run on, NettyApp.Run off) {
        double perMsOn = QuicheEvidence.figure(on, "WRITES", "maxPerMs");
        double perMsOff = QuicheEvidence.figure(off, "WRITES", "maxPerMs");
        String all = "\npaced:   " + figures(on) + "\nunpaced: " + figures(off);
        System.out.println("pacing evidence (socket):" + all);
        assertTrue(perMsOn < perMsOff, "paced bursts should be smaller:" + all);
    }

    /**
     * {@code on} paced, {@code off} not: same link, same algorithm. At the socket: the densest millisecond of
     * writes is smaller when paced. At the bottleneck: the queue stands lower or overflows less. Returns null
     * when both agree, else what they showed (the caller measures the pair again, at most twice).
     */
    static String checkPaced(NettyApp.Run on, NettyApp.Run off) {
        double perMsOn = QuicheEvidence.figure(on, "WRITES", "maxPerMs");
        double perMsOff = QuicheEvidence.figure(off, "WRITES", "maxPerMs");
        double backlogOn = QuicheEvidence.figure(on, "EMULATOR", "maxBacklogBytes");
        double backlogOff = QuicheEvidence.figure(off, "EMULATOR", "maxBacklogBytes");
        double dropsOn = QuicheEvidence.figure(on, "EMULATOR", "droppedQueue");
        double dropsOff = QuicheEvidence.figure(off, "EMULATOR", "droppedQueue");
        String all = "\npaced:   " + figures(on) + "\nunpaced: " + figures(off);
        System.out.println("pacing evidence:" + all);
        double queueOn = QuicheEvidence.figure(on, "EMULATOR", "queueDelayP50Micros");
        double queueOff = QuicheEvidence.figure(off, "EMULATOR", "queueDelayP50Micros");
        // back-to-back writes (backToBackPct) are printed, not asserted: on a loaded machine a late timer
        // releases the due datagrams together (up to netty.pacing.max-burst), paced or not.
        // The densest millisecond at the socket: smaller when paced (quiet machine, bulk app: 6 / 10;
        // loaded, Reactor: 6 / 56, 15 / 46, 12 / 36, 15 / 31). The gate's 13 clean clones and one full run
        // (2026-12-04, NettyQuicAgentTest, 10 Mbit/s): paced 4-7, unpaced 8-29, the closest pair 5 / 8; a late
        // timer can release up to netty.pacing.max-burst (16 KiB, 12 datagrams) at once, so one pair can fail
        // by chance (about 1e-3 a pair, a rough estimate from those tails). Until 2026-12-04 this was asserted
        // at once; now a pair that disagrees is measured again like the queue, up to three pairs: 1e-9 a run
        // if the pairs are independent, and a pacer that does nothing fails all three.
        if (perMsOn >= perMsOff) {
            return "paced bursts should be smaller (the densest millisecond at the socket):" + all;
        }
        // The bottleneck: unpaced BBR keeps the queue standing (median wait 32-38 ms of a 40 ms buffer),
        // paced less than 0.7 of that (1.7 ms bulk app, quiet; 16.6 ms Reactor at 1% loss), or the queue
        // overflows at most half as often
        boolean lower = queueOn <= 0.7 * queueOff
                || (dropsOn * 2 <= dropsOff && (dropsOn < dropsOff || backlogOn < backlogOff));
        return lower ? null : "the emulator's queue should stand lower or overflow less:" + all;
    }
}
