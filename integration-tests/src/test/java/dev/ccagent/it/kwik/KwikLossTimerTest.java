package dev.ccagent.it.kwik;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * kwik 0.10.9's loss-detection-timer race (RecoveryManager.setLossDetectionTimer decides, then cancels,
 * without a lock; see ccagent's {@code KwikLossTimerFix}) and the agent's opt-in fix
 * {@code fix.kwik-loss-timer=on}, reproduced deterministically on the client: the test-only
 * {@link LossTimerWidener} loses the client's request (its first 1-RTT datagram, written after the
 * handshake is confirmed) and holds the receiver's pass, which found nothing in flight after discarding
 * the Handshake space, between its decision to cancel and the cancel, while the sender registers the
 * request and arms the timer (the order found in the churn test's stalls). One 20 kB download against a stock server
 * (kwik's controller, with ccagent's stream-send fix), the client declaring a stall after
 * {@value #STALL_SECONDS} s without progress.
 * <ul>
 *   <li>unpatched client: the request is never retransmitted, the download stalls at 0 bytes;</li>
 *   <li>client with {@code fix.kwik-loss-timer=on}: the sender's pass waits for the receiver's (whose
 *       wait then times out after 2 s), the timer it arms stands, kwik's probe retransmits the request and the download arrives intact (compared byte for byte with the server's seeded data).</li>
 * </ul>
 */
class KwikLossTimerTest {

    static final int STALL_SECONDS = 5;
    /** The request was lost after the receiver's pass had decided to cancel (the widener's own account). */
    static final String DROP_LINE = "the receiver's pass had decided to cancel before: true";
    static final String CANCEL_LINE = "[loss-timer-widener] the receiver's pass cancels now";
    /** Unpatched: the sender armed the timer inside the receiver's window (with the fix it cannot, it waits). */
    static final String STRADDLED = "the sender's pass for the request returned before: true";

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void lostFirstRequestIsRetransmittedOnlyWithTheFix() throws Exception {
        Path dir = KwikIt.workDir("loss-timer");
        // the server keeps kwik's controller but has the stream-send fix: unpatched, its own race stalled the
        // patched client's download at byte 2,441 once (33dbd00's clean clone), which is not what this tests
        try (KwikIt.Server server = KwikIt.startServer(dir, "server", "cc=stock;fix.kwik-stream-stall=on;log=warn")) {
            KwikIt.ClientRun unpatched = download(dir, "client-unpatched", server, KwikIt.NO_AGENT);
            System.out.printf("[it] loss timer: unpatched client: %s%n", unpatched.stdout.trim().replace('\n', '|'));
            assertTrue(unpatched.stderr.contains(DROP_LINE) && unpatched.stderr.contains(STRADDLED),
                    "the widener did not set the race up:\n" + unpatched.describe);
            assertTrue(unpatched.stdout.contains("STALL conn=0 at=0") && !unpatched.allOk(1),
                    "the reproduction did not reproduce:\n" + unpatched.describe);

            KwikIt.ClientRun patched = download(dir, "client-patched", server,
                    "fix.kwik-loss-timer=on;fix.kwik-stream-stall=on;detect=off;log=debug");
            System.out.printf("[it] loss timer: client with fix.kwik-loss-timer=on: %s%n", patched.stdout.trim().replace('\n', '|'));
            assertTrue(patched.stderr.contains(DROP_LINE) && patched.stderr.contains(CANCEL_LINE)
                            && !patched.stderr.contains(STRADDLED),
                    "the widener did not set the race up:\n" + patched.describe);
            assertTrue(patched.stderr.contains("[ccagent] DEBUG instrumented tech.kwik.core.recovery.RecoveryManager"),
                    patched.describe);
            assertTrue(!patched.stdout.contains("STALL ") && patched.allOk(1), patched.describe + server.jvm.describe());
        }
    }

    private static KwikIt.ClientRun download(Path dir, String name, KwikIt.Server server, String agentArgs) throws Exception {
        Duration timeout = Duration.ofSeconds(40);
        return KwikIt.finish(KwikIt.launchClientWithLossTimerWidener(dir, name, agentArgs, timeout,
                "--port", Integer.toString(server.port), "--mode", "down", "--bytes", "20000",
                "--connections", "1", "--stall-seconds", Integer.toString(STALL_SECONDS), "--seed", "7"), timeout);
    }
}
