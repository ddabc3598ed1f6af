package dev.ccagent.it.kwik;

import java.util.ArrayList;
import java.util.List;

/**
 * How a test downloads from a server that runs kwik 0.10.7-0.10.9 as released: no ccagent (a stock
 * baseline, bad arguments), before ccagent is attached, or after it is detached. Such a server has
 * kwik's own stream-send race ({@code fix.kwik-stream-stall} closes it), and a transfer that hits it
 * never moves again. The client then declares it stalled and retries on a new connection; every retry
 * is counted and printed by the test (docs/testing.md, "Known flakes").
 *
 * <p>Measured (2026-12-04, 2 cores, one download at a time from a fresh server, no retries, the
 * client with both fixes; {@code S} a stall, {@code .} intact):
 * <ul>
 *   <li>2 MB over loopback: 40 of 80 attempts stalled on a quiet machine (4 servers of 20; at most 6 in
 *       a row), 20 of 60 beside two busy loops (3 servers of 20; at most 3 in a row);</li>
 *   <li>100 kB over loopback: 50 of 120 (4 servers of 30; at most 4 in a row);</li>
 *   <li>2 MB through {@link LossyLink} (20 Mbit/s, 50 ms, 1% loss): 13 of 40 (2 servers of 20; at most 3
 *       in a row);</li>
 *   <li>the gate's logs of 8 clean-clone runs: 34 retries in 74 attempts of {@code KwikBadArgumentsTest},
 *       and once 9 retries in a row for {@code OtherAgentsTest}'s baseline, the last one it allowed.</li>
 * </ul>
 * So a stall is close to an even chance per attempt, and no count of retries that a test can afford at
 * 8 s each makes a failure rare (5 retries: 0.5^6 = 1.6e-2 a download; 9: 1e-3; a gate run has 13 such
 * downloads). A stall on loopback shows at once (an intact download there takes well under a second), so
 * it is declared after {@link #LOOPBACK_STALL_SECONDS} and retried up to {@link #RETRIES} times.
 *
 * <p>Odds of a false failure: the retries allow 41 attempts, but a stalled attempt costs about 4 s (the
 * stall, the close, a new handshake), so the clients' time-outs bind first: at least 30 attempts for one
 * download in 120 s, and 45 shared by {@code KwikBadArgumentsTest}'s five in 180 s. At the measured rate
 * (0.43 pooled; take 0.5): 0.5^30 = 1e-9 a download, and 40 stalls before the fifth intact download
 * C(44,4) 0.5^45 = 4e-9; for the 13 such downloads of a gate run, below 1e-7. At 0.7, well above every
 * measurement: 2e-5 a download and 2e-4 for the five, about 4e-4 a gate run.
 */
final class UnpatchedKwik {

    /** No byte for this long on loopback: stalled (a retry costs this much; a false stall costs a retry). */
    static final int LOOPBACK_STALL_SECONDS = 2;
    /**
     * No byte for this long through {@link LossyLink} (20 Mbit/s, 50 ms, 1% loss): stalled. A gap of 4 s
     * there needs about four lost probes in a row (PTOs of about 0.2, 0.4, 0.8 and 1.6 s), 1e-8 at 1% loss.
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
