package dev.ccagent.agent.measure;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.config.CanaryConfig;
import dev.ccagent.agent.log.AgentLog;
import dev.ccagent.agent.runtime.AgentRuntime;
import dev.ccagent.jfr.CanaryRolledBack;
import dev.ccagent.jfr.JfrSwitch;

import java.util.Arrays;
import java.util.Locale;

/**
 * The canary guardrail ({@code guard=on}; see docs/canary.md). Judged when a connection closes (never
 * per packet), per library, each canary arm against the default arm, over the connections of each
 * arm that closed within {@code guard.window} and sent at least {@link #MIN_PACKETS} packets:
 *
 * <ul>
 *   <li>loss: the canary's median per-connection loss rate (bytes lost / bytes sent) is above
 *       {@code guard.loss-ratio} × the baseline's and at least {@link #MIN_LOSS_DIFFERENCE} above it;</li>
 *   <li>RTT: the canary's median per-connection RTT p95 is above the baseline's by more than
 *       {@code guard.rtt-p95-increase};</li>
 * </ul>
 * each only when both arms have {@code guard.min-connections} connections in the window and a
 * one-sided Mann–Whitney U test (normal approximation with tie correction and continuity correction)
 * says the canary's values are larger with p below {@code guard.p-value}. A spin or send-loop alarm
 * on a canary connection rolls its arm back at once ({@code guard.spin=on}).
 *
 * <p>A rolled-back arm gets no new connections (they go to the default arm); existing connections
 * keep their controller. {@code set} with a {@code canary} or {@code guard} entry re-enables every arm.
 */
public final class Guard {

    /** Connections that sent fewer packets say nothing about a controller. */
    static final long MIN_PACKETS = 10;
    /** The loss criterion also needs an absolute difference of half a percentage point. */
    static final double MIN_LOSS_DIFFERENCE = 0.005;
    /** Whether the guard judges this library's split: kwik's {@code canary=} and Netty QUIC's {@code netty.canary=}. */
    static boolean judged(String library) {
        return "kwik".equals(library) || "netty".equals(library);
    }

    /** The default arm of a library's split: {@code cc=} for kwik, {@code netty.cc=} for Netty QUIC. */
    static AgentConfig.Arm defaultArmOf(AgentConfig config, String library) {
        return "netty".equals(library) ? config.netty().defaultArm() : config.defaultArm();
    }

    private Guard() {
    }

    /** The closed connections of one arm (a bounded ring: the newest {@link #CAPACITY}). */
    static final class Window {
        static final int CAPACITY = 2048;
        private final long[] at = new long[CAPACITY];
        private final double[] loss = new double[CAPACITY];
        private final double[] rttP95 = new double[CAPACITY];
        private int size;
        private int head;

        synchronized void add(long time, double lossRate, double p95) {
            at[head] = time;
            loss[head] = lossRate;
            rttP95[head] = p95;
            head = (head + 1) % CAPACITY;
            size = Math.min(size + 1, CAPACITY);
        }

        synchronized void clear() {
            size = 0;
            head = 0;
        }

        /** {loss rates, RTT p95s} of connections closed at or after {@code since}. */
        synchronized double[][] since(long since) {
            double[] l = new double[size];
            double[] r = new double[size];
            int n = 0;
            for (int i = 0; i < size; i++) {
                int idx = (head - 1 - i + CAPACITY) % CAPACITY;
                if (at[idx] - since < 0) {
                    continue;
                }
                l[n] = loss[idx];
                r[n] = rttP95[idx];
                n++;
            }
            return new double[][] {Arrays.copyOf(l, n), Arrays.copyOf(r, n)};
        }
    }

    // ---------------------------------------------------------------- selection

    /**
     * The arm a new connection really gets: {@code chosen}, or the default arm when the guard rolled
     * {@code chosen} back.
     */
    public static AgentConfig.Arm redirect(String library, AgentConfig config, AgentConfig.Arm chosen) {
        if (chosen == null || "default".equals(chosen.label())) {
            return chosen;
        }
        ArmStats s = ArmStats.find(library, chosen.label(), chosen.algorithm());
        return s != null && s.isRolledBack() ? defaultArmOf(config, library) : chosen;
    }

    /** Re-enables every rolled-back arm ({@code set canary=...} or {@code set guard=...}). */
    public static void reEnableAll(String why) {
        for (ArmStats a : ArmStats.all().values()) {
            if (a.isRolledBack()) {
                a.reEnable();
                AgentLog.info("guard: " + a.getLibrary() + " " + a.getArm() + ":" + a.getAlgorithm()
                        + " re-enabled by " + why);
            } else {
                a.guardWindow.clear();
            }
        }
    }

    // ---------------------------------------------------------------- judging

    static void onClosed(ArmStats arm, long bytesSent, long bytesLost, long packetsSent, long rttP95Nanos, long at) {
        try {
            if (packetsSent < MIN_PACKETS || bytesSent <= 0) {
                return;
            }
            arm.guardWindow.add(at, (double) bytesLost / bytesSent, rttP95Nanos / 1e6);
            AgentConfig config = AgentRuntime.config();
            if (config == null || !config.canary().guard() || !judged(arm.getLibrary())) {
                return;
            }
            evaluate(arm.getLibrary(), config, at);
        } catch (Throwable t) {
            AgentLog.warnOnce("guard-failure", "guard: evaluation failed, no rollback decided: " + t, null);
        }
    }

    static void onAlarm(ArmStats arm, String what) {
        AgentConfig config = AgentRuntime.config();
        if (config == null || !config.canary().guard() || !config.canary().spin() || arm.isBaseline()
                || !judged(arm.getLibrary())
                || arm.isRolledBack()) {
            return;
        }
        ArmStats base = ArmStats.find(arm.getLibrary(), "default", defaultArmOf(config, arm.getLibrary()).algorithm());
        rollBack(arm, base, config, "spin alarm", 1, 0, 0, arm.getConnections(),
                base != null ? base.getConnections() : 0, what + " on a " + arm.getAlgorithm() + " connection");
    }

    private static void evaluate(String library, AgentConfig config, long now) {
        CanaryConfig c = config.canary();
        ArmStats base = ArmStats.find(library, "default", defaultArmOf(config, library).algorithm());
        if (base == null) {
            return;
        }
        long since = now - c.windowNanos();
        double[][] b = base.guardWindow.since(since);
        if (b[0].length < c.minConnections()) {
            return;
        }
        for (ArmStats arm : ArmStats.all().values()) {
            if (!arm.getLibrary().equals(library) || arm.isBaseline() || arm.isRolledBack()) {
                continue;
            }
            double[][] k = arm.guardWindow.since(since);
            int n = k[0].length;
            if (n < c.minConnections()) {
                continue;
            }
            double cl = median(k[0]);
            double bl = median(b[0]);
            if (cl > c.lossRatio() * bl && cl - bl >= MIN_LOSS_DIFFERENCE) {
                double p = mannWhitneyGreater(k[0], b[0]);
                if (p < c.pValue()) {
                    rollBack(arm, base, config, "loss ratio", cl, bl, c.lossRatio(), n, b[0].length,
                            String.format(Locale.ROOT, "median loss rate %.2f%% vs %.2f%% (%s > %.1fx), Mann-Whitney p=%.2g",
                                    100 * cl, 100 * bl, bl > 0 ? String.format(Locale.ROOT, "%.1fx", cl / bl)
                                            : "baseline lost nothing", c.lossRatio(), p));
                    continue;
                }
            }
            double cr = median(k[1]);
            double br = median(b[1]);
            if (br > 0 && cr > br * (1 + c.rttP95Increase())) {
                double p = mannWhitneyGreater(k[1], b[1]);
                if (p < c.pValue()) {
                    rollBack(arm, base, config, "rtt p95 increase", cr, br, c.rttP95Increase(), n, b[1].length,
                            String.format(Locale.ROOT, "median RTT p95 %.1f ms vs %.1f ms (+%.0f%% > +%.0f%%), Mann-Whitney p=%.2g",
                                    cr, br, 100 * (cr / br - 1), 100 * c.rttP95Increase(), p));
                }
            }
        }
    }

    private static synchronized void rollBack(ArmStats arm, ArmStats base, AgentConfig config, String metric,
                                              double canaryValue, double baselineValue, double threshold,
                                              long canaryConnections, long baselineConnections, String figures) {
        if (arm.isRolledBack()) {
            return;
        }
        long window = config.canary().windowNanos();
        String evidence = String.format(Locale.ROOT, "%s %s:%s worse than default:%s on %s over %ds: %s "
                        + "(%d vs %d connections); new connections go to the default arm",
                arm.getLibrary(), arm.getArm(), arm.getAlgorithm(), defaultArmOf(config, arm.getLibrary()).algorithm(), metric,
                window / 1_000_000_000L, figures, canaryConnections, baselineConnections);
        arm.rollBack(evidence);
        AgentLog.warn("guard: rolled back " + evidence);
        AgentRuntime.recordAlarm("guard rolled back " + evidence);
        if (!JfrSwitch.on) {
            return;
        }
        try {
            CanaryRolledBack e = new CanaryRolledBack();
            if (e.shouldCommit()) {
                e.library = arm.getLibrary();
                e.canaryArm = arm.getArm();
                e.canaryAlgorithm = arm.getAlgorithm();
                e.baselineAlgorithm = defaultArmOf(config, arm.getLibrary()).algorithm();
                e.metric = metric;
                e.canaryValue = canaryValue;
                e.baselineValue = baselineValue;
                e.threshold = threshold;
                e.canaryConnections = canaryConnections;
                e.baselineConnections = baselineConnections;
                e.window = window;
                e.evidence = evidence;
                e.commit();
            }
        } catch (Throwable ignored) {
            // never break the host
        }
    }

    // ---------------------------------------------------------------- statistics

    static double median(double[] values) {
        if (values.length == 0) {
            return 0;
        }
        double[] s = values.clone();
        Arrays.sort(s);
        int m = s.length / 2;
        return s.length % 2 == 1 ? s[m] : (s[m - 1] + s[m]) / 2;
    }

    /**
     * One-sided p-value that values of {@code a} tend to be larger than those of {@code b}
     * (Mann–Whitney U, normal approximation with tie and continuity corrections); 1 when every value ties.
     */
    static double mannWhitneyGreater(double[] a, double[] b) {
        int na = a.length;
        int nb = b.length;
        int n = na + nb;
        if (na == 0 || nb == 0) {
            return 1;
        }
        double[] all = new double[n];
        int[] fromA = new int[n];
        Integer[] order = new Integer[n];
        for (int i = 0; i < na; i++) {
            all[i] = a[i];
            fromA[i] = 1;
        }
        System.arraycopy(b, 0, all, na, nb);
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        Arrays.sort(order, (x, y) -> Double.compare(all[x], all[y]));
        double rankSumA = 0;
        double tieTerm = 0;
        int i = 0;
        while (i < n) {
            int j = i;
            while (j + 1 < n && all[order[j + 1]] == all[order[i]]) {
                j++;
            }
            double rank = (i + j) / 2.0 + 1;
            int t = j - i + 1;
            tieTerm += (double) t * t * t - t;
            for (int k = i; k <= j; k++) {
                rankSumA += fromA[order[k]] * rank;
            }
            i = j + 1;
        }
        double u = rankSumA - na * (na + 1) / 2.0;
        double mean = na * (double) nb / 2;
        double variance = na * (double) nb / 12 * ((n + 1) - tieTerm / ((double) n * (n - 1)));
        if (variance <= 0) {
            return 1;
        }
        double z = (u - mean - 0.5) / Math.sqrt(variance);
        return 1 - normalCdf(z);
    }

    /** Standard normal CDF (Abramowitz–Stegun 7.1.26 for erf, absolute error below 1.5e-7). */
    static double normalCdf(double z) {
        double x = Math.abs(z) / Math.sqrt(2);
        double t = 1 / (1 + 0.3275911 * x);
        double poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
        double erf = 1 - poly * Math.exp(-x * x);
        return z >= 0 ? 0.5 * (1 + erf) : 0.5 * (1 - erf);
    }
}
