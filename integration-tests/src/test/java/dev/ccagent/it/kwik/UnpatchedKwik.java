package dev.ccagent.it.kwik;

import java.util.ArrayList;
import java.util.List;

/**
 * How a test downloads from a server that runs kwik 0.10.7-0.10.9 as released: without ccagent (bad
 * arguments install nothing) or before ccagent is attached (a detach keeps the fix since 2026-12-04,
 * issue 34); and kwik 0.10.3, which ccagent leaves alone. Such a server has kwik's own stream-send race ({@code fix.kwik-stream-stall}
 * closes it), and a transfer that hits it never moves again. The client then declares it stalled and
 * retries on a new connection; every retry is counted and printed by the test (docs/testing.md, "Known
 * flakes").
 *
 * <p>Measured (2026-12-04, 2 cores, the client with both fixes; {@code S} a stall, {@code .} intact):
 * <ul>
 *   <li>the plain test server, one download at a time, 20-30 from each fresh server, no retries: 2 MB over
 *       loopback 40 of 80 stalled on a quiet machine (at most 6 in a row) and 20 of 60 beside two busy
 *       loops (at most 3 in a row); 100 kB over loopback 50 of 120 (at most 4 in a row); 2 MB through
 *       {@link LossyLink} (20 Mbit/s, 50 ms, 1% loss) 13 of 40 (at most 3 in a row);</li>
 *   <li>the gate's logs of 9 clean-clone runs: {@code KwikBadArgumentsTest} (five fresh servers, 100 kB)
 *       retried 39 of 84 attempts; {@code KwikLateAttachTest} (a fresh server, 1 MB) 4 of 13;
 *       {@code KwikDetachCloseOutTest} (50 downloads of 1.5 MB through a 40 Mbit/s link, the detach
 *       mid-transfer) once had about half of its downloads stall after the detach, and one of them four
 *       times in a row, the last attempt its 3 retries allowed (bf683da's clean clone, passed on the rerun;
 *       the detach has kept the fix since, and that test allows no stall);</li>
 *   <li>fresh servers of heavier set-ups (a Spring Boot jar, OpenTelemetry's agent, Java 25), their stock
 *       baselines (a 2 MB loopback warm-up, then 2 MB through the link): 22 of 27 attempts stalled, 9 in a
 *       row once (those read back all stopped at byte 1,221 of the warm-up). Those
 *       baselines no longer run kwik unpatched: they are measured on the same server after ccagent is
 *       attached and reconfigured to {@code cc=stock}, the fix on.</li>
 * </ul>
 * The old 5 retries at 4 s each left 0.5^6 = 1.6e-2 a download. A stall on loopback shows at once (an
 * intact download there takes well under a second), so it is declared after
 * {@link #LOOPBACK_STALL_SECONDS} and retried up to {@link #RETRIES} times.
 *
 * <p>Odds of a false failure: a stalled attempt costs about 4 s (the stall, the close, a new handshake),
 * so the clients' time-outs bind before the retries: at least 30 attempts for one download in 120 s
 * ({@code KwikLateAttachTest}), and 60 shared by {@code KwikBadArgumentsTest}'s five in 240 s. At 0.5,
 * above the plain server's measured rates: 0.5^30 = 1e-9 a download, and 55 stalls before the fifth intact
 * download C(59,4) 0.5^60 = 4e-13. At 0.7, far above them: 2e-5 a download, 3e-6 for the five of
 * {@code KwikBadArgumentsTest}.
 */
final class UnpatchedKwik {

    /** No byte for this long on loopback: stalled (a retry costs this much; a false stall costs a retry). */
    static final int LOOPBACK_STALL_SECONDS = 2;
    /**
     * No byte for this long through an emulated link: stalled. Through {@link LossyLink} (20 Mbit/s,
     * 50 ms, 1% loss) a gap of 4 s needs about four lost probes in a row (PTOs of about 0.2, 0.4, 0.8 and
     * 1.6 s), 1e-8 at 1% loss; through {@code KwikDetachCloseOutTest}'s link (4 ms) the PTOs are shorter
     * (that test uses it to declare a stall, and allows none).
     */
    static final int LINK_STALL_SECONDS = 4;
    /** Retries of a stalled download, each on a new connection; the odds above. */
    static final int RETRIES = 40;

    private UnpatchedKwik() {
    }

    /** {@code args} of a download from unpatched kwik over loopback, with this stall detection and retries. */
    static String[] overLoopback(String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--stall-seconds", Integer.toString(LOOPBACK_STALL_SECONDS),
                "--stall-retries", Integer.toString(RETRIES)));
        return all.toArray(new String[0]);
    }
}
