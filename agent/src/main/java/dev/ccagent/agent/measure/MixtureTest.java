package dev.ccagent.agent.measure;

/**
 * An always-valid one-sided sequential test that a stream of independent yes/no trials has success
 * probability at most {@code p0}: a mixture of likelihood ratios (Robbins 1970; the mixture sequential
 * probability ratio test of Johari, Koomen, Pekelis and Walsh, "Always Valid Inference", Operations
 * Research 70(3), 2022, arXiv:1512.04922), over a fixed grid of alternatives {@code q > p0} and over
 * the trial where the excess began.
 *
 * <p>For an alternative {@code q} and a start {@code s}, {@code L(q, s)_n = Π_{i>s} (q/p0)^B_i ((1-q)/(1-p0))^(1-B_i)}
 * (1 up to {@code s}) is a nonnegative supermartingale with mean at most 1 whenever the true probability
 * is at most {@code p0}: each factor has expectation {@code p·q/p0 + (1-p)(1-q)/(1-p0) ≤ 1} for
 * {@code p ≤ p0 < q}. So is any weighted average {@code M_n = Σ w(q) π(s) L(q, s)_n} with weights summing
 * to at most 1, and so is what is left of it after terms are dropped (it can only be smaller). Ville's
 * inequality gives {@code P(sup_n M_n ≥ 1/α) ≤ α}: rejecting when {@code M_n} first reaches {@code 1/α}
 * has false-rejection probability at most α however long it runs and however often it is looked at. The
 * trials enter only as yes/no, so nothing about the metric's distribution or tails matters.
 *
 * <p>The starts: trial 0 with weight {@value #FIRST_WEIGHT}, and every {@value #START_EVERY} trials
 * another ({@code i}-th) with weight {@code (1 - FIRST_WEIGHT) / (i (i + 1))}: a canary that turns bad
 * after a long good run is caught within a few dozen trials of the next start, instead of having to
 * undo all the evidence for it first. At most {@value #STARTS} starts are kept: when full, the one that
 * contributes least is dropped.
 *
 * <p>Fixed size, no allocation after construction; not thread-safe (the guard's thread owns it).
 */
final class MixtureTest {

    /** Where the alternatives sit between p0 and 1 (equal weights). */
    static final double[] GRID = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 0.94};
    static final double FIRST_WEIGHT = 0.75;
    static final int START_EVERY = 16;
    static final int STARTS = 32;
    private static final double LOG_GRID_WEIGHT = -Math.log(GRID.length);

    private final double[] logUp = new double[GRID.length];
    private final double[] logDown = new double[GRID.length];
    /** [start][alternative]: ln L. */
    private final double[][] log = new double[STARTS][GRID.length];
    /** ln π of each start's weight; NaN when the slot is free. */
    private final double[] logPrior = new double[STARTS];
    private double p0;
    private long trials;
    private long successes;
    private long startsMade;

    MixtureTest(double p0) {
        reset(p0);
    }

    /** Starts over (a new test with its own α) against {@code p0} in (0, 1). */
    void reset(double p0) {
        if (!(p0 > 0 && p0 < 1)) {
            throw new IllegalArgumentException("p0 must be in (0, 1): " + p0);
        }
        this.p0 = p0;
        for (int j = 0; j < GRID.length; j++) {
            double q = p0 + (1 - p0) * GRID[j];
            logUp[j] = Math.log(q / p0);
            logDown[j] = Math.log((1 - q) / (1 - p0));
        }
        java.util.Arrays.fill(logPrior, Double.NaN);
        trials = 0;
        successes = 0;
        startsMade = 0;
        bound = Double.NEGATIVE_INFINITY;
    }

    void add(boolean success) {
        if (trials % START_EVERY == 0) {
            newStart();
        }
        trials++;
        if (success) {
            successes++;
        }
        double[] f = success ? logUp : logDown;
        double max = Double.NEGATIVE_INFINITY;
        int terms = 0;
        for (int s = 0; s < STARTS; s++) {
            if (Double.isNaN(logPrior[s])) {
                continue;
            }
            double[] l = log[s];
            for (int j = 0; j < l.length; j++) {
                l[j] += f[j];
                max = Math.max(max, logPrior[s] + l[j]);
            }
            terms += l.length;
        }
        // M is at most (number of terms) × the largest term: most looks need no exp at all
        bound = max + LOG_GRID_WEIGHT + Math.log(terms);
    }

    /** An upper bound of ln M after the last trial. */
    private double bound = Double.NEGATIVE_INFINITY;

    private void newStart() {
        long i = startsMade++;
        double prior = i == 0 ? Math.log(FIRST_WEIGHT) : Math.log(1 - FIRST_WEIGHT) - Math.log(i) - Math.log(i + 1);
        int slot = -1;
        double least = Double.POSITIVE_INFINITY;
        for (int s = 0; s < STARTS; s++) {
            if (Double.isNaN(logPrior[s])) {
                slot = s;
                break;
            }
            double c = contribution(s);
            if (c < least) {
                least = c;
                slot = s;
            }
        }
        logPrior[slot] = prior;
        java.util.Arrays.fill(log[slot], 0);
    }

    /** ln of one start's term: π(s) × the grid average of its likelihood ratios. */
    private double contribution(int s) {
        double[] l = log[s];
        double max = Double.NEGATIVE_INFINITY;
        for (double v : l) {
            max = Math.max(max, v);
        }
        double sum = 0;
        for (double v : l) {
            sum += Math.exp(v - max);
        }
        return logPrior[s] + LOG_GRID_WEIGHT + max + Math.log(sum);
    }

    /** {@code ln M_n} (ln 0.75 before any trial: only the first start's weight is in). */
    double logEvidence() {
        double max = Double.NEGATIVE_INFINITY;
        int n = 0;
        double[] c = scratch;
        for (int s = 0; s < STARTS; s++) {
            if (Double.isNaN(logPrior[s])) {
                continue;
            }
            c[n] = contribution(s);
            max = Math.max(max, c[n]);
            n++;
        }
        if (n == 0) {
            return Double.NEGATIVE_INFINITY;
        }
        double sum = 0;
        for (int i = 0; i < n; i++) {
            sum += Math.exp(c[i] - max);
        }
        return max + Math.log(sum);
    }

    private final double[] scratch = new double[STARTS];

    /** Whether {@code M_n ≥ 1/alpha}. */
    boolean rejects(double alpha) {
        double threshold = -Math.log(alpha);
        return trials > 0 && bound >= threshold && logEvidence() >= threshold;
    }

    long trials() {
        return trials;
    }

    long successes() {
        return successes;
    }

    double p0() {
        return p0;
    }
}
