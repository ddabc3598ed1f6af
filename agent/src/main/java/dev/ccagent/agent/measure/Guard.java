package dev.ccagent.agent.measure;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.config.CanaryConfig;
import dev.ccagent.agent.log.AgentLog;
import dev.ccagent.agent.runtime.AgentRuntime;
import dev.ccagent.jfr.CanaryRolledBack;
import dev.ccagent.jfr.JfrSwitch;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The canary guardrail ({@code guard=on}; see docs/canary.md): a sequential test that stays valid
 * however long it runs and however often it looks.
 *
 * <p><b>Recording</b> (the library's closing thread, {@link #onClosed}): one O(1) write of four numbers
 * into the arm's fixed-size {@link Window}; no allocation, no sorting, no test.
 *
 * <p><b>Judging</b> (the agent's {@code ccagent-summary} thread, at most once per
 * {@link #EVALUATE_EVERY_NANOS}, {@link #evaluate}): each canary arm's new closes are paired with the
 * default arm's, in close order (a close pairs with the other arm's most recent unpaired close, at most
 * {@code guard.window} apart). Each pair is one yes/no trial per metric: "is the canary connection worse
 * than its baseline partner by more than the margin?"
 * <ul>
 *   <li>loss: canary loss rate above {@code guard.loss-ratio} × the partner's + {@link #MIN_LOSS_DIFFERENCE};</li>
 *   <li>RTT: canary RTT p95 above (1 + {@code guard.rtt-p95-increase}) × the partner's;</li>
 *   <li>goodput: canary goodput below (1 − {@code guard.goodput-decrease}) × the partner's.</li>
 * </ul>
 * If the canary arm's values are stochastically no worse than the baseline's moved by the margin (the
 * null hypothesis), each trial says yes with probability at most 1/2, whatever the distribution (ties
 * only lower it). A {@link MixtureTest} per metric tests p ≤ 1/2; the arm is rolled back when one of them
 * reaches 1/(α/k) after at least {@code guard.min-connections} pairs, k being the number of tests (three,
 * four with {@code guard.spin=on}). By Ville's inequality and the union bound, an arm that is no worse is
 * rolled back with probability at most {@code guard.alpha} over an unbounded run.
 *
 * <p><b>CPU spin</b> ({@code guard.spin=on}): only {@link dev.ccagent.agent.detect.CpuSpinMonitor}
 * episodes (the server's CPU burned without progress) count, at most one per connection: each is a trial
 * "on the canary arm?", which, if the canary spins no more often per connection than the baseline, says yes
 * with probability at most the canary's share p0 of the two arms' connections; the same mixture test
 * against p0, and at least {@code guard.spin-connections} canary connections with an episode. Send-loop and
 * ACK-only alarms ({@link ArmStats#alarm}) are patterns a client can cause: counted, never judged.
 *
 * <p>A rolled-back arm gets no new connections (they go to the default arm); existing connections keep
 * their controller. {@code set} with a {@code canary}, {@code netty.canary} or {@code guard…} entry, and a
 * fresh attach, re-enable every arm and start every test afresh ({@link #reEnableAll}).
 */
public final class Guard {

    /** Connections that sent fewer packets say nothing about a controller. */
    static final long MIN_PACKETS = 10;
    /** The loss criterion also needs an absolute difference of half a percentage point. */
    static final double MIN_LOSS_DIFFERENCE = 0.005;
    /** Connections that had fewer bytes acknowledged have no goodput worth comparing. */
    static final long MIN_GOODPUT_BYTES = 16 * 1024;
    /** The test runs at most this often. */
    static final long EVALUATE_EVERY_NANOS = 1_000_000_000L;
    /** Connections of one arm whose CPU spin episodes are remembered (one trial per connection). */
    static final int SPIN_IDS = 64;

    static final String LOSS = "loss ratio";
    static final String RTT = "rtt p95 increase";
    static final String GOODPUT = "goodput decrease";
    static final String SPIN = "cpu spin";

    private static long lastEvaluation;
    private static boolean evaluated;

    /** Whether the guard judges this library's split: kwik's {@code canary=} and Netty QUIC's {@code netty.canary=}. */
    static boolean judged(String library) {
        return "kwik".equals(library) || "netty".equals(library);
    }

    /** The default arm of a library's split: {@code cc=} for kwik, {@code netty.cc=} for Netty QUIC. */
    static AgentConfig.Arm defaultArmOf(AgentConfig config, String library) {
        return "netty".equals(library) ? config.netty().defaultArm() : config.defaultArm();
    }

    static List<AgentConfig.Arm> canaryArmsOf(AgentConfig config, String library) {
        return "netty".equals(library) ? config.netty().canaryArms() : config.canaryArms();
    }

    private Guard() {
    }

    /**
     * The closes of one arm: a fixed ring of the newest {@link #CAPACITY}, written in O(1) without
     * allocation by whichever thread closes a connection, read by the guard's thread.
     */
    static final class Window {
        static final int CAPACITY = 2048;
        private final long[] at = new long[CAPACITY];
        private final double[] loss = new double[CAPACITY];
        private final double[] rttP95 = new double[CAPACITY];
        private final double[] goodput = new double[CAPACITY];
        /** Records ever written (the next one goes to {@code written % CAPACITY}). */
        private long written;

        synchronized void add(long time, double lossRate, double p95, double bytesPerSecond) {
            int i = (int) (written % CAPACITY);
            at[i] = time;
            loss[i] = lossRate;
            rttP95[i] = p95;
            goodput[i] = bytesPerSecond;
            written++;
        }

        synchronized long written() {
            return written;
        }

        /**
         * Copies the records from {@code from} on (at most the newest {@link #CAPACITY}) into {@code into};
         * returns the number of records that were overwritten before they could be read.
         */
        synchronized long copy(long from, Batch into) {
            long start = Math.max(from, written - CAPACITY);
            into.n = 0;
            into.end = written;
            for (long s = start; s < written; s++) {
                int i = (int) (s % CAPACITY);
                int k = into.n++;
                into.at[k] = at[i];
                into.loss[k] = loss[i];
                into.rtt[k] = rttP95[i];
                into.goodput[k] = goodput[i];
            }
            return start - from;
        }
    }

    /** The guard thread's copy of new records (preallocated). */
    static final class Batch {
        final long[] at = new long[Window.CAPACITY];
        final double[] loss = new double[Window.CAPACITY];
        final double[] rtt = new double[Window.CAPACITY];
        final double[] goodput = new double[Window.CAPACITY];
        int n;
        long end;
    }

    /** One arm's CPU spin episodes (detector thread; rare). */
    static final class Spins {
        private final String[] ids = new String[SPIN_IDS];
        private final long[] at = new long[SPIN_IDS];
        private long written;

        /** True when the connection had no episode counted yet. */
        synchronized boolean add(String connectionId, long time) {
            for (long s = Math.max(0, written - SPIN_IDS); s < written; s++) {
                if (ids[(int) (s % SPIN_IDS)].equals(connectionId)) {
                    return false;
                }
            }
            int i = (int) (written % SPIN_IDS);
            ids[i] = connectionId;
            at[i] = time;
            written++;
            return true;
        }

        synchronized long written() {
            return written;
        }

        synchronized long at(long s) {
            return s < written - SPIN_IDS ? Long.MIN_VALUE : at[(int) (s % SPIN_IDS)];
        }
    }

    /**
     * One arm's closes not paired yet, newest on top (a close pairs with the other arm's newest unpaired
     * close: the nearest in time). Fixed size: when full, the oldest is dropped. Which closes pair depends
     * only on the order and times of closes and the arms' labels, never on the values compared.
     */
    static final class Waiting {
        static final int CAPACITY = 64;
        final long[] at = new long[CAPACITY];
        final double[] loss = new double[CAPACITY];
        final double[] rtt = new double[CAPACITY];
        final double[] goodput = new double[CAPACITY];
        int top;  // index of the next push
        int size;

        void push(long time, double l, double r, double g) {
            at[top] = time;
            loss[top] = l;
            rtt[top] = r;
            goodput[top] = g;
            top = (top + 1) % CAPACITY;
            size = Math.min(size + 1, CAPACITY);
        }

        /** Pops the newest close if it is within {@code window} of {@code now}: its index, else -1 (and empties). */
        int popWithin(long now, long window) {
            if (size == 0) {
                return -1;
            }
            int i = (top - 1 + CAPACITY) % CAPACITY;
            if (now - at[i] > window) {
                size = 0; // the newest is too old: so are the others
                return -1;
            }
            top = i;
            size--;
            return i;
        }
    }

    /** The sequential state of one canary arm against its baseline (guard thread only). */
    static final class Judge {
        /** Set by a re-enable: start afresh at the next evaluation. */
        boolean stale;
        ArmStats base;
        long canaryCursor;
        long baseCursor;
        long canarySpinCursor;
        long baseSpinCursor;
        final Batch canaryBatch = new Batch();
        final Batch baseBatch = new Batch();
        /** Each arm's unpaired closes, newest on top. */
        final Waiting canaryWaiting = new Waiting();
        final Waiting baseWaiting = new Waiting();
        final MixtureTest loss = new MixtureTest(0.5);
        final MixtureTest rtt = new MixtureTest(0.5);
        final MixtureTest goodput = new MixtureTest(0.5);
        MixtureTest spin;
        long spinConnections;
        long canaryRecords;
        long baseRecords;
        long lost;
        long pairs;
        /** The newest paired values, for the evidence's medians: [metric][canary 0 / base 1][ring]. */
        final double[][][] recent = new double[3][2][Window.CAPACITY];
        final long[] recentN = new long[3];

        void restart(ArmStats baseline, ArmStats canary) {
            stale = false;
            base = baseline;
            canaryCursor = canary.guardWindow.written();
            baseCursor = baseline != null ? baseline.guardWindow.written() : 0;
            canarySpinCursor = canary.spins.written();
            baseSpinCursor = baseline != null ? baseline.spins.written() : 0;
            canaryWaiting.size = 0;
            baseWaiting.size = 0;
            loss.reset(0.5);
            rtt.reset(0.5);
            goodput.reset(0.5);
            spin = null;
            spinConnections = 0;
            canaryRecords = 0;
            baseRecords = 0;
            lost = 0;
            pairs = 0;
            Arrays.fill(recentN, 0);
        }

        void remember(int metric, double canary, double baseline) {
            int i = (int) (recentN[metric]++ % Window.CAPACITY);
            recent[metric][0][i] = canary;
            recent[metric][1][i] = baseline;
        }

        double median(int metric, int side) {
            int n = (int) Math.min(recentN[metric], Window.CAPACITY);
            if (n == 0) {
                return Double.NaN;
            }
            double[] s = Arrays.copyOf(recent[metric][side], n);
            Arrays.sort(s);
            int m = n / 2;
            return n % 2 == 1 ? s[m] : (s[m - 1] + s[m]) / 2;
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

    /**
     * Re-enables every rolled-back arm and starts every test afresh (with its own α): {@code set canary=...},
     * {@code set netty.canary=...}, {@code set guard...}, and attach.
     */
    public static synchronized void reEnableAll(String why) {
        for (ArmStats a : ArmStats.all().values()) {
            if (a.isRolledBack()) {
                a.reEnable();
                AgentLog.info("guard: " + a.getLibrary() + " " + a.getArm() + ":" + a.getAlgorithm()
                        + " re-enabled by " + why + "; its test starts afresh");
            }
            if (a.judge != null) {
                a.judge.stale = true;
            }
            a.guardFrom = a.guardWindow.written();
            a.spinFrom = a.spins.written();
        }
        evaluated = false;
    }

    // ---------------------------------------------------------------- recording (library threads)

    /**
     * A server connection of {@code arm} closed: O(1), no allocation. {@code at} is its close time
     * ({@link System#nanoTime()} or a test's clock).
     */
    static void onClosed(ArmStats arm, long bytesSent, long bytesLost, long packetsSent, long rttP95Nanos,
                         long bytesAcked, long transferNanos, long at) {
        try {
            if (packetsSent < MIN_PACKETS || bytesSent <= 0) {
                return;
            }
            double goodput = bytesAcked >= MIN_GOODPUT_BYTES && transferNanos > 0 ? bytesAcked * 1e9 / transferNanos
                    : Double.NaN;
            arm.guardWindow.add(at, (double) bytesLost / bytesSent, rttP95Nanos > 0 ? rttP95Nanos / 1e6 : Double.NaN,
                    goodput);
        } catch (Throwable t) {
            AgentLog.warnOnce("guard-failure", "guard: recording a close failed, no rollback decided: " + t, null);
        }
    }

    /** A CPU spin episode on a connection of {@code arm} (the detector's thread). */
    public static void onCpuSpin(ArmStats arm, String connectionId, long at) {
        try {
            arm.spins.add(connectionId == null ? "" : connectionId, at);
        } catch (Throwable t) {
            AgentLog.warnOnce("guard-failure", "guard: recording a CPU spin failed, no rollback decided: " + t, null);
        }
    }

    // ---------------------------------------------------------------- judging (the agent's thread)

    /** The agent's ticker: judges at most once per {@link #EVALUATE_EVERY_NANOS}. */
    static void tick(long now) {
        synchronized (Guard.class) {
            if (evaluated && now - lastEvaluation < EVALUATE_EVERY_NANOS) {
                return;
            }
            evaluated = true;
            lastEvaluation = now;
        }
        evaluate(now);
    }

    /** Judges every canary arm on the closes recorded since the last call (tests call it with their clock). */
    static synchronized void evaluate(long now) {
        try {
            AgentConfig config = AgentRuntime.config();
            if (config == null || !config.canary().guard()) {
                return;
            }
            for (ArmStats arm : ArmStats.all().values()) {
                if (arm.isBaseline() || arm.isRolledBack() || !judged(arm.getLibrary()) || !inSplit(arm, config)) {
                    continue;
                }
                ArmStats base = ArmStats.find(arm.getLibrary(), "default", defaultArmOf(config, arm.getLibrary()).algorithm());
                if (base == null) {
                    continue;
                }
                Judge j = arm.judge;
                if (j == null) {
                    j = new Judge();
                    j.stale = true;
                    arm.judge = j;
                }
                if (j.stale) {
                    // a new experiment from the last re-enable (0: every close since the arm appeared)
                    j.restart(base, arm);
                    j.canaryCursor = arm.guardFrom;
                    j.baseCursor = base.guardFrom;
                    j.canarySpinCursor = arm.spinFrom;
                    j.baseSpinCursor = base.spinFrom;
                } else if (j.base != base) {
                    j.restart(base, arm); // the default arm changed: a new experiment from now
                }
                judge(arm, j, config);
            }
        } catch (Throwable t) {
            AgentLog.warnOnce("guard-failure", "guard: evaluation failed, no rollback decided: " + t, null);
        }
    }

    /**
     * The close {@code i} of a batch, taken in time order: paired with the other arm's oldest close still
     * waiting within the window, or left waiting itself.
     */
    private static void arrive(Judge j, CanaryConfig c, Batch batch, int i, boolean canary, long window) {
        Waiting own = canary ? j.canaryWaiting : j.baseWaiting;
        Waiting other = canary ? j.baseWaiting : j.canaryWaiting;
        int w = other.popWithin(batch.at[i], window);
        if (w < 0) {
            own.push(batch.at[i], batch.loss[i], batch.rtt[i], batch.goodput[i]);
        } else if (canary) {
            pair(j, c, batch.loss[i], batch.rtt[i], batch.goodput[i], other.loss[w], other.rtt[w], other.goodput[w]);
        } else {
            pair(j, c, other.loss[w], other.rtt[w], other.goodput[w], batch.loss[i], batch.rtt[i], batch.goodput[i]);
        }
    }

    private static void judge(ArmStats arm, Judge j, AgentConfig config) {
        CanaryConfig c = config.canary();
        j.lost += arm.guardWindow.copy(j.canaryCursor, j.canaryBatch);
        j.canaryCursor = j.canaryBatch.end;
        j.lost += j.base.guardWindow.copy(j.baseCursor, j.baseBatch);
        j.baseCursor = j.baseBatch.end;
        if (j.lost > 0) {
            AgentLog.warnOnce("guard-lost", "guard: " + j.lost + " closes were overwritten before the guard read them"
                    + " (more than " + Window.CAPACITY + " per arm per second); the test goes on without them", null);
        }
        Batch k = j.canaryBatch;
        Batch b = j.baseBatch;
        j.canaryRecords += k.n;
        j.baseRecords += b.n;
        int x = 0;
        int y = 0;
        long window = c.windowNanos();
        while (x < k.n || y < b.n) {
            if (y >= b.n || (x < k.n && k.at[x] - b.at[y] <= 0)) {
                arrive(j, c, k, x++, true, window);
            } else {
                arrive(j, c, b, y++, false, window);
            }
        }
        long spinsBefore = j.spin != null ? j.spin.trials() : 0;
        if (c.spin()) {
            spins(arm, j, config);
        }
        if (k.n > 0 || b.n > 0 || (j.spin != null && j.spin.trials() != spinsBefore) || arm.guardState.isEmpty()) {
            arm.guardState = state(j, c);
        }
        decide(arm, j, config);
    }

    /** The test's state in one line (MXBean {@code GuardState}, {@code status}). */
    private static String state(Judge j, CanaryConfig c) {
        double threshold = tests(c) / c.alpha();
        StringBuilder sb = new StringBuilder(160);
        sb.append(String.format(Locale.ROOT, "%d pairs (%d vs %d connections), rollback at e-value %.0f after %d pairs;",
                j.pairs, j.canaryRecords, j.baseRecords, threshold, c.minConnections()));
        append(sb, "loss", j.loss);
        append(sb, "rtt", j.rtt);
        append(sb, "goodput", j.goodput);
        if (j.spin != null) {
            append(sb, "cpu spin", j.spin);
        }
        return sb.toString();
    }

    private static void append(StringBuilder sb, String name, MixtureTest t) {
        sb.append(String.format(Locale.ROOT, " %s %d/%d worse e=%.3g", name, t.successes(), t.trials(),
                t.trials() > 0 ? Math.exp(Math.min(700, t.logEvidence())) : 0.0));
    }

    /** One pair: a trial per metric that both connections have. */
    private static void pair(Judge j, CanaryConfig c, double kl, double kr, double kg, double bl, double br, double bg) {
        j.pairs++;
        j.loss.add(kl > c.lossRatio() * bl + MIN_LOSS_DIFFERENCE);
        j.remember(0, kl, bl);
        if (!Double.isNaN(kr) && !Double.isNaN(br)) {
            j.rtt.add(kr > (1 + c.rttP95Increase()) * br);
            j.remember(1, kr, br);
        }
        if (!Double.isNaN(kg) && !Double.isNaN(bg)) {
            j.goodput.add(kg < (1 - c.goodputDecrease()) * bg);
            j.remember(2, kg, bg);
        }
    }

    /** CPU spin episodes of the two arms in time order: each a trial "on the canary?" against its share p0. */
    private static void spins(ArmStats arm, Judge j, AgentConfig config) {
        long kw = arm.spins.written();
        long bw = j.base.spins.written();
        if (j.spin == null) {
            double p0 = canaryShare(arm, config);
            if (!(p0 > 0 && p0 < 1)) {
                j.canarySpinCursor = kw;
                j.baseSpinCursor = bw;
                return;
            }
            j.spin = new MixtureTest(p0);
        }
        while (j.canarySpinCursor < kw || j.baseSpinCursor < bw) {
            long ka = j.canarySpinCursor < kw ? arm.spins.at(j.canarySpinCursor) : Long.MAX_VALUE;
            long ba = j.baseSpinCursor < bw ? j.base.spins.at(j.baseSpinCursor) : Long.MAX_VALUE;
            if (j.canarySpinCursor < kw && (j.baseSpinCursor >= bw || ka - ba <= 0)) {
                j.spin.add(true);
                j.spinConnections++;
                j.canarySpinCursor++;
            } else {
                j.spin.add(false);
                j.baseSpinCursor++;
            }
        }
    }

    /** Whether the current split has this canary arm (an arm of an earlier configuration is not judged). */
    static boolean inSplit(ArmStats arm, AgentConfig config) {
        for (AgentConfig.Arm a : canaryArmsOf(config, arm.getLibrary())) {
            if (a.label().equals(arm.getArm()) && a.algorithm().equals(arm.getAlgorithm())) {
                return true;
            }
        }
        return false;
    }

    /** The canary arm's share of the connections of itself and the default arm, from the split. */
    static double canaryShare(ArmStats arm, AgentConfig config) {
        List<AgentConfig.Arm> arms = canaryArmsOf(config, arm.getLibrary());
        double all = 0;
        double mine = -1;
        for (AgentConfig.Arm a : arms) {
            all += a.percent();
            if (a.label().equals(arm.getArm()) && a.algorithm().equals(arm.getAlgorithm())) {
                mine = a.percent();
            }
        }
        double base = 100 - all;
        return mine > 0 && base > 0 ? mine / (mine + base) : -1;
    }

    /** The number of tests that share α (union bound). */
    static int tests(CanaryConfig c) {
        return c.spin() ? 4 : 3;
    }

    private static void decide(ArmStats arm, Judge j, AgentConfig config) {
        CanaryConfig c = config.canary();
        double alpha = c.alpha() / tests(c);
        if (j.loss.trials() >= c.minConnections() && j.loss.rejects(alpha)) {
            double cl = j.median(0, 0);
            double bl = j.median(0, 1);
            rollBack(arm, j, config, LOSS, j.loss, alpha, cl, bl, c.lossRatio(), String.format(Locale.ROOT,
                    "a loss rate above %.1fx its baseline partner's + %.1f points", c.lossRatio(), 100 * MIN_LOSS_DIFFERENCE),
                    String.format(Locale.ROOT, "median loss rate %.2f%% vs %.2f%%", 100 * cl, 100 * bl));
        } else if (j.rtt.trials() >= c.minConnections() && j.rtt.rejects(alpha)) {
            double cr = j.median(1, 0);
            double br = j.median(1, 1);
            rollBack(arm, j, config, RTT, j.rtt, alpha, cr, br, c.rttP95Increase(), String.format(Locale.ROOT,
                    "an RTT p95 more than %.0f%% above its baseline partner's", 100 * c.rttP95Increase()),
                    String.format(Locale.ROOT, "median RTT p95 %.1f ms vs %.1f ms", cr, br));
        } else if (j.goodput.trials() >= c.minConnections() && j.goodput.rejects(alpha)) {
            double cg = j.median(2, 0);
            double bg = j.median(2, 1);
            rollBack(arm, j, config, GOODPUT, j.goodput, alpha, cg, bg, c.goodputDecrease(), String.format(Locale.ROOT,
                    "a goodput more than %.0f%% below its baseline partner's", 100 * c.goodputDecrease()),
                    String.format(Locale.ROOT, "median goodput %.2f Mbit/s vs %.2f Mbit/s", cg * 8 / 1e6, bg * 8 / 1e6));
        } else if (j.spin != null && j.spinConnections >= c.spinConnections() && j.spin.rejects(alpha)) {
            rollBack(arm, j, config, SPIN, j.spin, alpha, j.spin.successes(), j.spin.trials() - j.spin.successes(),
                    j.spin.p0(), String.format(Locale.ROOT, "against its %.0f%% share of the two arms' connections (server CPU burned without progress;"
                            + " one episode per connection)", 100 * j.spin.p0()),
                    String.format(Locale.ROOT, "%d canary vs %d baseline connections with a CPU spin episode",
                            j.spin.successes(), j.spin.trials() - j.spin.successes()));
        }
    }

    private static void rollBack(ArmStats arm, Judge j, AgentConfig config, String metric, MixtureTest test,
                                 double alpha, double canaryValue, double baselineValue, double threshold,
                                 String margin, String figures) {
        if (arm.isRolledBack()) {
            return;
        }
        CanaryConfig c = config.canary();
        double e = Math.exp(Math.min(700, test.logEvidence()));
        String evidence = String.format(Locale.ROOT, "%s %s:%s worse than default:%s on %s: %d of %d %s %s "
                        + "(mixture sequential test: e-value %.3g >= 1/(alpha/%d) = %.0f, alpha %s over the whole run); %s "
                        + "(%d vs %d connections, %d pairs); new connections go to the default arm",
                arm.getLibrary(), arm.getArm(), arm.getAlgorithm(), defaultArmOf(config, arm.getLibrary()).algorithm(), metric,
                test.successes(), test.trials(), SPIN.equals(metric) ? "CPU spin episodes were on canary connections," : "canary connections had",
                margin,
                e, tests(c), 1 / alpha, trim(c.alpha()), figures, j.canaryRecords, j.baseRecords, j.pairs);
        arm.rollBack(evidence);
        AgentLog.warn("guard: rolled back " + evidence);
        AgentRuntime.recordAlarm("guard rolled back " + evidence);
        if (!JfrSwitch.on) {
            return;
        }
        try {
            CanaryRolledBack ev = new CanaryRolledBack();
            if (ev.shouldCommit()) {
                ev.library = arm.getLibrary();
                ev.canaryArm = arm.getArm();
                ev.canaryAlgorithm = arm.getAlgorithm();
                ev.baselineAlgorithm = defaultArmOf(config, arm.getLibrary()).algorithm();
                ev.metric = metric;
                ev.canaryValue = canaryValue;
                ev.baselineValue = baselineValue;
                ev.threshold = threshold;
                ev.canaryConnections = j.canaryRecords;
                ev.baselineConnections = j.baseRecords;
                ev.window = c.windowNanos();
                ev.trials = test.trials();
                ev.worseTrials = test.successes();
                ev.eValue = e;
                ev.alpha = c.alpha();
                ev.evidence = evidence;
                ev.commit();
            }
        } catch (Throwable ignored) {
            // never break the host
        }
    }

    private static String trim(double v) {
        String s = String.format(Locale.ROOT, "%.6f", v);
        return s.replaceAll("0+$", "").replaceAll("\\.$", "");
    }
}
