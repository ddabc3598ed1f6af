package dev.ccagent.it.bench;

import dev.ccagent.agent.config.AgentArgs;
import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.connection.LiveConnection;
import dev.ccagent.agent.connection.LiveConnections;
import dev.ccagent.agent.connection.SendTelemetry;
import dev.ccagent.agent.detect.SpinDetector;
import dev.ccagent.agent.jfr.CongestionStatePoller;
import dev.ccagent.agent.runtime.AgentRuntime;
import dev.ccagent.cc.CcSnapshot;
import dev.ccagent.cc.CongestionMode;
import dev.ccagent.jfr.CcEvents;
import dev.ccagent.jfr.EventFields;
import dev.ccagent.jfr.EventNames;
import dev.ccagent.jfr.JfrSwitch;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;

import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The recording budget measured: bytes a minute of a recording with ccagent's settings (ccagent.jfc)
 * while N synthetic connections are live and active every period, with the budget at its default
 * ({@code jfr.state-connections=256}) and without it (the largest value, 1,000,000), one run after the
 * other per N. The connections are stand-ins for a library's (real kwik does not reach 10,000 live
 * connections on a 2-core machine): {@link LiveConnection}s in the agent's registry whose counters a
 * thread moves every 100 ms (it is their "sender thread" too), so the agent's own poller
 * ({@link CongestionStatePoller}, registered as the agent registers it) writes their CongestionState and
 * its detector ({@link SpinDetector}, {@code detect=on} as by default) their SendPathAllocation windows.
 * The evidence is the file's size on disk and its events, read back with {@link RecordingFile}.
 *
 * <pre>
 * java -cp tools/target/classes:$(cat tools/target/classpath.txt):agent/target/ccagent.jar \
 *      dev.ccagent.it.bench.RecordingBudgetBench [--seconds 60] [--connections 100,1000,10000] [--out DIR]
 * </pre>
 */
public final class RecordingBudgetBench {

    /** The budget off: the largest value the option takes. */
    static final int UNBOUNDED = AgentConfig.MAX_STATE_CONNECTIONS;

    /** A live connection that the driver thread keeps active. */
    static final class StandIn implements LiveConnection {
        private final SendTelemetry telemetry = new SendTelemetry("kwik", true);
        private final AgentConfig.Arm arm;
        private final long window;

        StandIn(int index, AgentConfig.Arm arm) {
            this.arm = arm;
            this.window = 30_000 + 37L * index;
            telemetry.setConnectionId(String.format(Locale.ROOT, "%016x", 0x5eed_0000_0000L + index * 7919L));
        }

        @Override public SendTelemetry telemetry() {
            return telemetry;
        }

        @Override public String algorithm() {
            return arm.algorithm();
        }

        @Override public AgentConfig.Arm arm() {
            return arm;
        }

        /** Figures of a connection in PROBE_BW, as a BBR connection has them. */
        @Override public CcSnapshot snapshot(CcSnapshot into) {
            into.algorithm = arm.algorithm();
            into.mode = CongestionMode.PROBE_BW;
            into.probeBwPhase = (int) (telemetry.datagramsSent % 8);
            into.congestionWindow = window;
            into.bytesInFlight = window / 2;
            into.bandwidthEstimate = 2_500_000;
            into.pacingRate = 2_600_000;
            into.pacingQuantum = 2_400;
            into.minRttNanos = 20_000_000;
            into.smoothedRttNanos = 24_000_000 + telemetry.datagramsSent;
            into.bytesAcked = 1_200 * telemetry.datagramsSent;
            into.pacingGain = 1.25;
            into.cwndGain = 2;
            return into;
        }

        @Override public long getWindowSize() {
            return window;
        }

        @Override public long getBytesInFlight() {
            return window / 2;
        }

        @Override public boolean switchToStock() {
            return false;
        }
    }

    /** One run's figures. */
    record Run(int connections, int budget, double seconds, long fileBytes, long events, long states,
               int periods, long maxStatesInAPeriod, double meanWeightSumPerPeriod, long allocations) {

        double bytesPerMinute() {
            return fileBytes * 60 / seconds;
        }

        String line() {
            return String.format(Locale.ROOT, "%,7d  %-9s  %6.1f  %,14d  %,12.0f  %,10d  %,10d  %,8.1f  %,7d  %,11.1f  %,11d",
                    connections, budget == UNBOUNDED ? "none" : Integer.toString(budget), seconds, fileBytes,
                    bytesPerMinute(), events, states, states / seconds, maxStatesInAPeriod, meanWeightSumPerPeriod,
                    allocations);
        }
    }

    static final String HEADER = "  conns  budget     secs      file bytes  bytes/minute      events      states  states/s  max/per  weights/per  allocations";

    private RecordingBudgetBench() {
    }

    public static void main(String[] args) throws Exception {
        double seconds = 60;
        int[] counts = {100, 1_000, 10_000};
        Path out = Path.of("recording-budget-" + System.currentTimeMillis());
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--seconds" -> seconds = Double.parseDouble(args[++i]);
                case "--connections" -> counts = Arrays.stream(args[++i].split(",")).mapToInt(Integer::parseInt).toArray();
                case "--out" -> out = Path.of(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument " + args[i]
                        + " (--seconds S, --connections N,N,..., --out DIR)");
            }
        }
        Files.createDirectories(out);
        JfrSwitch.install();
        CongestionStatePoller.register();
        List<Run> runs = new ArrayList<>();
        System.out.println("recording budget: " + seconds + " s per run, ccagent.jfc, load average "
                + loadAverage() + "; files in " + out);
        System.out.println(HEADER);
        for (int n : counts) {
            for (int budget : new int[] {AgentConfig.DEFAULT_STATE_CONNECTIONS, UNBOUNDED}) {
                Run r = run(n, budget, seconds, out.resolve("n" + n + "-budget-" + (budget == UNBOUNDED ? "none" : budget)
                        + ".jfr"));
                runs.add(r);
                System.out.println(r.line());
            }
        }
        System.out.println("load average at the end " + loadAverage());
    }

    /** One recording of {@code seconds} with {@code n} active stand-ins under {@code budget}. */
    static Run run(int n, int budget, double seconds, Path file) throws Exception {
        AgentConfig config = AgentArgs.parse("cc=bbr1;jfr.state-connections=" + budget).config();
        AgentRuntime.setConfig(config);
        SpinDetector.apply(config);
        List<StandIn> connections = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            StandIn c = new StandIn(i, config.defaultArm());
            connections.add(c);
            LiveConnections.register(c);
        }
        java.util.concurrent.atomic.AtomicBoolean recording = new java.util.concurrent.atomic.AtomicBoolean(true);
        Thread driver = new Thread(() -> {
            do {
                // activity each period: every connection has something to say
                connections.forEach(c -> c.telemetry.datagramsSent++);
                java.util.concurrent.locks.LockSupport.parkNanos(100_000_000L);
            } while (recording.get());
        }, "stand-in-traffic");
        driver.setDaemon(true);
        driver.start();
        for (StandIn c : connections) {
            c.telemetry.senderThreadId = driver.getId();
            c.telemetry.senderStartNanos = System.nanoTime();
        }
        long start = System.nanoTime();
        try (Recording rec = new Recording(Configuration.create(new StringReader(CcEvents.settingsText())))) {
            rec.setToDisk(true);
            rec.setDestination(file);
            rec.start();
            JfrSwitch.refresh();
            Thread.sleep((long) (seconds * 1000));
            rec.stop(); // written to the destination
        } finally {
            recording.set(false);
            driver.join();
            connections.forEach(LiveConnections::closed);
        }
        double elapsed = (System.nanoTime() - start) / 1e9;
        return read(file, n, budget, elapsed);
    }

    /** The file's size and events; CongestionState grouped into periods (bursts more than 300 ms apart). */
    static Run read(Path file, int n, int budget, double seconds) throws Exception {
        long events = 0;
        long allocations = 0;
        long[] times = new long[1024];
        double[] weights = new double[1024];
        int states = 0;
        try (RecordingFile in = new RecordingFile(file)) {
            while (in.hasMoreEvents()) {
                RecordedEvent e = in.readEvent();
                events++;
                if (e.getEventType().getName().equals(EventNames.SEND_PATH_ALLOCATION)) {
                    allocations++;
                }
                if (e.getEventType().getName().equals(EventNames.CONGESTION_STATE)) {
                    if (states == times.length) {
                        times = Arrays.copyOf(times, 2 * states);
                        weights = Arrays.copyOf(weights, 2 * states);
                    }
                    times[states] = e.getStartTime().getEpochSecond() * 1_000_000_000L + e.getStartTime().getNano();
                    weights[states++] = e.getDouble(EventFields.WEIGHT);
                }
            }
        }
        Integer[] order = new Integer[states];
        for (int i = 0; i < states; i++) {
            order[i] = i;
        }
        long[] t = times;
        Arrays.sort(order, (a, b) -> Long.compare(t[a], t[b]));
        int periods = 0;
        long inPeriod = 0;
        long maxInPeriod = 0;
        double weightSum = 0;
        long previous = Long.MIN_VALUE;
        for (Integer i : order) {
            if (previous == Long.MIN_VALUE || t[i] - previous > Duration.ofMillis(300).toNanos()) {
                periods++;
                inPeriod = 0;
            }
            inPeriod++;
            maxInPeriod = Math.max(maxInPeriod, inPeriod);
            weightSum += weights[i];
            previous = t[i];
        }
        return new Run(n, budget, seconds, Files.size(file), events, states, periods, maxInPeriod,
                periods > 0 ? weightSum / periods : 0, allocations);
    }

    private static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
        } catch (Exception e) {
            return "unknown";
        }
    }
}
