package dev.ccagent.report;

import dev.ccagent.jfr.CongestionState;
import dev.ccagent.jfr.ConnectionSummary;
import dev.ccagent.jfr.PacingStall;
import jdk.jfr.Recording;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * Writes synthetic ccagent recordings with the product's own event classes: each "JVM" is one
 * {@link Recording} with its own agent instance, connections split over arms, CongestionState samples
 * with slow start, a loss sawtooth and RTT noise, periodic and closing ConnectionSummary events and the
 * odd PacingStall. Used by the report tests, for the HTML screenshot and for the 1 GB scale run:
 *
 * <pre>
 * java -cp agent/target/test-classes:agent/target/classes:jfr-events/target/classes \
 *     dev.ccagent.report.SyntheticFleet --out DIR --jvms 100 --mb-per-jvm 10 [--connections 200]
 *     [--round-ms 2] [--seed 1] [--canary-factor 1.0]
 * </pre>
 */
public final class SyntheticFleet {

    /** One arm: label, algorithm, share of connections and the model of its connections. */
    public record ArmModel(String label, String algorithm, double share, double goodputMedianBps, double goodputSigma,
                           double rttMillis, double lossRate) {
    }

    /** A planned connection: everything its events will say. */
    public static final class Plan {
        public String agentInstance;
        public String connectionId;
        public ArmModel arm;
        public int startRound;
        public int rounds;
        public double goodputBps;
        public double rttP50Nanos;
        public double rttP95Nanos;
        public double lossRate;
        public boolean leftSlowStart;
        public long lifetimeNanos;
        public long bytesAcked;
        public long bytesSent;
        public long bytesLost;
        public boolean fallback;
    }

    private SyntheticFleet() {
    }

    public static List<ArmModel> twoArms(double canaryFactor) {
        return List.of(new ArmModel("default", "stock", 0.5, 4e6, 0.6, 50, 0.012),
                new ArmModel("canary", "bbr1", 0.5, 4e6 * canaryFactor, 0.6, 50, 0.012));
    }

    /** Plans {@code n} connections of one JVM with {@code rounds} sampling rounds. */
    public static List<Plan> plan(String agentInstance, int n, int rounds, long roundNanos, List<ArmModel> arms,
                                  SplittableRandom r) {
        List<Plan> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Plan p = new Plan();
            p.agentInstance = agentInstance;
            p.connectionId = String.format(Locale.ROOT, "%016x", r.nextLong());
            double u = r.nextDouble();
            double acc = 0;
            p.arm = arms.get(arms.size() - 1);
            for (ArmModel a : arms) {
                acc += a.share();
                if (u < acc) {
                    p.arm = a;
                    break;
                }
            }
            p.rounds = Math.max(2, rounds / 3 + r.nextInt(Math.max(1, rounds * 2 / 3)));
            p.startRound = r.nextInt(Math.max(1, rounds - p.rounds + 1));
            p.goodputBps = p.arm.goodputMedianBps() * Math.exp(p.arm.goodputSigma() * gaussian(r));
            p.rttP50Nanos = p.arm.rttMillis() * 1e6 * Math.exp(0.15 * gaussian(r));
            p.rttP95Nanos = p.rttP50Nanos * (1.2 + 0.6 * r.nextDouble());
            p.lossRate = r.nextDouble() < 0.2 ? 0 : p.arm.lossRate() * Math.exp(0.5 * gaussian(r));
            p.lifetimeNanos = p.rounds * roundNanos;
            p.bytesAcked = (long) (p.goodputBps / 8 * p.lifetimeNanos / 1e9);
            p.bytesSent = (long) (p.bytesAcked / (1 - Math.min(0.5, p.lossRate)));
            p.bytesLost = p.bytesSent - p.bytesAcked;
            p.leftSlowStart = p.bytesAcked > 200_000 && r.nextDouble() < 0.9;
            p.fallback = r.nextDouble() < 0.01;
            out.add(p);
        }
        return out;
    }

    /**
     * Writes the planned connections as one JVM's recording: CongestionState every round (sleeping
     * {@code roundMillis} between rounds, so the samples span real time), a periodic summary every
     * {@code periodicEvery} rounds (0: none) and a closing summary at each connection's end.
     */
    public static void write(Path file, List<Plan> plans, int rounds, long roundMillis, int periodicEvery,
                             boolean states, boolean summaries, SplittableRandom r) throws IOException, InterruptedException {
        try (Recording rec = new Recording()) {
            rec.enable(CongestionState.class).withoutStackTrace();
            rec.enable(ConnectionSummary.class).withoutStackTrace();
            rec.enable(PacingStall.class).withoutStackTrace();
            rec.setToDisk(true);
            rec.start();
            long[] sequence = new long[plans.size()];
            for (int round = 0; round < rounds; round++) {
                for (int i = 0; i < plans.size(); i++) {
                    Plan p = plans.get(i);
                    int k = round - p.startRound;
                    if (k < 0 || k >= p.rounds) {
                        continue;
                    }
                    double progress = (k + 1) / (double) p.rounds;
                    if (states) {
                        state(p, k, progress, r);
                    }
                    if (states && r.nextInt(400) == 0) {
                        PacingStall s = new PacingStall();
                        s.library = "kwik";
                        s.connectionId = p.connectionId;
                        s.algorithm = p.arm.algorithm();
                        s.expectedWait = 1_000_000;
                        s.waitTime = (long) (p.rttP50Nanos * (r.nextDouble() * 1.6));
                        s.pacingRate = (long) (p.goodputBps / 8);
                        s.commit();
                    }
                    boolean last = k == p.rounds - 1;
                    if (summaries && (last || (periodicEvery > 0 && k > 0 && k % periodicEvery == 0))) {
                        summary(p, last ? 1 : progress, sequence[i]++, last ? "close" : "periodic");
                    }
                }
                if (roundMillis > 0) {
                    Thread.sleep(roundMillis);
                }
            }
            rec.stop();
            rec.dump(file);
        }
    }

    /** What a test commits into a recording. */
    interface Commits {
        void run() throws Exception;
    }

    /** Records what {@code commits} commits of the given event types into {@code file}. */
    static Path record(Path file, List<Class<? extends jdk.jfr.Event>> types, Commits commits) throws Exception {
        try (Recording rec = new Recording()) {
            for (Class<? extends jdk.jfr.Event> type : types) {
                rec.enable(type);
            }
            rec.start();
            commits.run();
            rec.stop();
            rec.dump(file);
        }
        return file;
    }

    static void summary(Plan p, double progress, long sequence, String trigger) {
        ConnectionSummary s = new ConnectionSummary();
        s.agentInstance = p.agentInstance;
        s.library = "kwik";
        s.connectionId = p.connectionId;
        s.role = "server";
        s.canaryArm = p.arm.label();
        s.algorithm = p.fallback ? "stock" : p.arm.algorithm();
        s.controller = p.fallback ? "fallback" : p.arm.algorithm().equals("stock") ? "stock" : "ccagent";
        s.trigger = trigger;
        s.sequence = sequence;
        s.lifetime = (long) (p.lifetimeNanos * progress);
        s.bytesSent = (long) (p.bytesSent * progress);
        s.bytesAcked = (long) (p.bytesAcked * progress);
        s.bytesLost = (long) (p.bytesLost * progress);
        s.packetsSent = s.bytesSent / 1200;
        s.packetsLost = s.bytesLost / 1200;
        s.rttSamples = Math.max(1, s.packetsSent / 2);
        s.minRtt = (long) (p.rttP50Nanos * 0.8);
        s.smoothedRtt = (long) p.rttP50Nanos;
        s.rttP50 = (long) p.rttP50Nanos;
        s.rttP95 = (long) p.rttP95Nanos;
        s.appLimitedTime = s.lifetime / 20;
        s.leftSlowStart = p.leftSlowStart && progress == 1;
        s.commit();
    }

    private static void state(Plan p, int k, double progress, SplittableRandom r) {
        CongestionState s = new CongestionState();
        s.library = "kwik";
        s.connectionId = p.connectionId;
        s.canaryArm = p.arm.label();
        s.algorithm = p.arm.algorithm();
        double bdp = p.goodputBps / 8 * p.rttP50Nanos / 1e9;
        boolean slowStart = k < 3;
        double window = slowStart ? 12_000 * Math.pow(2, k * 1.5)
                : bdp * (0.7 + 0.5 * ((k % 7) / 6.0)) * Math.exp(0.1 * gaussian(r));
        s.mode = slowStart ? (p.arm.algorithm().startsWith("bbr") ? "STARTUP" : "slow start")
                : p.arm.algorithm().startsWith("bbr") ? "PROBE_BW" : "congestion avoidance";
        s.trigger = "periodic";
        s.probeBwPhase = -1;
        s.congestionWindow = (long) Math.max(2400, window);
        s.bytesInFlight = (long) (s.congestionWindow * (0.5 + 0.5 * r.nextDouble()));
        s.smoothedRtt = (long) (p.rttP50Nanos * (1 + 0.25 * Math.abs(gaussian(r))));
        s.minRtt = (long) (p.rttP50Nanos * 0.8);
        s.pacingRate = (long) (1.25 * s.congestionWindow / (s.smoothedRtt / 1e9));
        s.bandwidthEstimate = (long) (p.goodputBps / 8);
        s.bytesAcked = (long) (p.bytesAcked * progress);
        s.packetsLost = (long) (p.bytesLost * progress / 1200);
        s.commit();
    }

    static double gaussian(SplittableRandom r) {
        double u = r.nextDouble();
        double w = r.nextDouble();
        return Math.sqrt(-2 * Math.log(1 - u)) * Math.cos(2 * Math.PI * w);
    }

    public static void main(String[] args) throws Exception {
        Path out = null;
        int jvms = 100;
        double mbPerJvm = 10;
        int connections = 200;
        long roundMillis = 2;
        long seed = 1;
        double canaryFactor = 1.0;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--out" -> out = Path.of(args[++i]);
                case "--jvms" -> jvms = Integer.parseInt(args[++i]);
                case "--mb-per-jvm" -> mbPerJvm = Double.parseDouble(args[++i]);
                case "--connections" -> connections = Integer.parseInt(args[++i]);
                case "--round-ms" -> roundMillis = Long.parseLong(args[++i]);
                case "--seed" -> seed = Long.parseLong(args[++i]);
                case "--canary-factor" -> canaryFactor = Double.parseDouble(args[++i]);
                default -> {
                    System.err.println("unknown argument " + args[i]);
                    System.exit(2);
                }
            }
        }
        if (out == null) {
            System.err.println("--out DIR is required");
            System.exit(2);
        }
        Files.createDirectories(out);
        // about 130 bytes per CongestionState event on disk: rounds so that one JVM's file is near mbPerJvm
        int rounds = (int) Math.max(10, mbPerJvm * 1e6 / 130 / (connections * 0.66));
        SplittableRandom root = new SplittableRandom(seed);
        long total = 0;
        long t0 = System.nanoTime();
        for (int j = 0; j < jvms; j++) {
            SplittableRandom r = root.split();
            String agent = String.format(Locale.ROOT, "%08x", r.nextInt());
            List<Plan> plans = plan(agent, connections, rounds, roundMillis * 1_000_000L, twoArms(canaryFactor), r);
            Path file = out.resolve(String.format(Locale.ROOT, "jvm-%03d.jfr", j));
            write(file, plans, rounds, roundMillis, 50, true, true, r);
            total += Files.size(file);
            System.out.printf(Locale.ROOT, "%s %.1f MB (total %.1f MB, %.0f s)%n", file, Files.size(file) / 1e6,
                    total / 1e6, (System.nanoTime() - t0) / 1e9);
        }
    }
}
