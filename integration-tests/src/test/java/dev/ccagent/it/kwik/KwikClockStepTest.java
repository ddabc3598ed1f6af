package dev.ccagent.it.kwik;

import dev.ccagent.it.Acceptance;
import dev.ccagent.it.ForkedJvm;
import dev.ccagent.it.clock.ClockStepper;
import dev.ccagent.it.clock.WallClockOffset;
import dev.ccagent.it.emulator.LinkEmulator;
import dev.ccagent.it.emulator.LinkProfile;
import dev.ccagent.jfr.EventFields;
import dev.ccagent.jfr.EventNames;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Wall-clock steps in both directions leave a kwik connection's RTT and goodput alone (issue 34, item 2).
 * kwik stamps every packet's send time and every ACK's receive time with its wall clock
 * ({@code Clock.systemUTC()}), which an NTP step or {@code date -s} moves; our algorithms run on
 * {@link System#nanoTime()}. The test-only {@link ClockStepper} steps a kwik server's wall clock
 * forward by {@value #STEP_MS} ms and back again every {@value #PERIOD_MS} ms (only the wall clock:
 * {@code System.nanoTime()} does not move), while the server sends {@value #BYTES} bytes with bbr1 through
 * the emulator (a clean {@value #RATE_BPS} bit/s link with a {@value #PROPAGATION_MS} ms round trip).
 * A second server, not stepped, is the baseline. Evidence from outside the code under test:
 * <ul>
 *   <li>the steps: the stepper's own lines, placed inside the download by the client's
 *       {@code System.nanoTime()} (one machine-wide {@code CLOCK_MONOTONIC} on Linux);</li>
 *   <li>the RTT: the server's recording, read with the JDK's parser: the connection's min RTT in its
 *       close {@code ConnectionSummary} (our measurement) and the smallest min RTT of its
 *       {@code CongestionState} events (what bbr1 ran on) both sit at or above the emulator's propagation
 *       delay, below which no round trip can be, and within {@value #MIN_RTT_SLACK_MS} ms of the baseline's.
 *       Before the fix, the offset taken at the connection's start made each sample after a forward step 0
 *       (the send time converted into the future, clamped to the ACK's) and the summary's min RTT 1 ns;</li>
 *   <li>the goodput: what the client received, checked byte for byte, at least {@value #GOODPUT_RATIO}
 *       of the baseline's.</li>
 * </ul>
 */
class KwikClockStepTest {

    static final long BYTES = 8_000_000;
    static final long RATE_BPS = 20_000_000;
    static final long PROPAGATION_MS = 50;
    static final long PERIOD_MS = 1000;
    static final long STEP_MS = 1000;
    static final long MIN_RTT_SLACK_MS = 5;
    static final double GOODPUT_RATIO = 0.7;

    /** The acceptance test's steps: forward and back every 50 ms, 80-100 steps in each download. */
    static final long FREQUENT_PERIOD_MS = 50;
    static final int FREQUENT_RUNS = 10;

    static final Pattern STEP = Pattern.compile("\\[clock-stepper] step ([+-]\\d+) ms at mono=(\\d+)");
    static final Pattern MONO = Pattern.compile("^MONO RESULT conn=0 start=(\\d+) end=(\\d+)", Pattern.MULTILINE);

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void wallClockStepsLeaveRttAndGoodputAlone() throws Exception {
        Path dir = KwikIt.workDir("clock-step");
        Run baseline = download(dir, "unstepped", 0);
        Run stepped = download(dir, "stepped", PERIOD_MS);

        // the steps fell inside the measured download, both ways
        int[] steps = stepped.stepsInside();
        assertTrue(steps[0] >= 1 && steps[1] >= 1, "the wall clock was not stepped both ways during the download:\n"
                + stepped.serverStderr);

        for (Run r : List.of(baseline, stepped)) {
            System.out.printf(Locale.ROOT, "[it] clock step: %s: %.2f Mbit/s, summary min RTT %.3f ms (%d samples, "
                            + "p50 %.1f ms, p95 %.1f ms), bbr1's smallest min RTT %.3f ms, %s%n", r.name, r.mbps,
                    r.summaryMinRtt / 1e6, r.rttSamples, r.rttP50 / 1e6, r.rttP95 / 1e6, r.controllerMinRtt / 1e6, LossyLink.load());
        }
        long floor = PROPAGATION_MS * 1_000_000L;
        long slack = MIN_RTT_SLACK_MS * 1_000_000L;
        assertTrue(stepped.summaryMinRtt >= floor && stepped.summaryMinRtt <= baseline.summaryMinRtt + slack,
                "the stepped connection's measured min RTT moved: " + stepped.summaryMinRtt + " ns (baseline "
                        + baseline.summaryMinRtt + " ns, propagation " + floor + " ns)");
        assertTrue(stepped.controllerMinRtt >= floor && stepped.controllerMinRtt <= baseline.controllerMinRtt + slack,
                "bbr1's min RTT moved: " + stepped.controllerMinRtt + " ns (baseline " + baseline.controllerMinRtt + " ns)");
        assertTrue(stepped.mbps >= GOODPUT_RATIO * baseline.mbps, String.format(Locale.ROOT,
                "stepped goodput %.2f Mbit/s below %.2f of the baseline's %.2f", stepped.mbps, GOODPUT_RATIO, baseline.mbps));
    }

    /**
     * Steps every {@value #FREQUENT_PERIOD_MS} ms, {@value #FREQUENT_RUNS} downloads: no RTT sample of any
     * of them lies under the link's propagation delay. A send stamp converted first after a step cannot be
     * trusted, and the registration time put in for it is late by the datagram's send (and by any pause
     * there); until 2026-12-08 that packet still gave an RTT sample, and 6 of 20 such downloads had a min
     * RTT under the floor (as low as 10.091 ms); 0 of 19 since. Measured, not gated: each download takes
     * about 20 s.
     * With the fix, every sample rests on kwik's stamps, and the floor is physical (the bounds table in
     * docs/testing.md).
     */
    @Test
    @Acceptance("frequent wall-clock steps: min RTT at or above the propagation delay in 10 downloads")
    @Timeout(value = 600, unit = TimeUnit.SECONDS)
    void frequentStepsNeverTakeAnRttSampleUnderThePropagationDelay() throws Exception {
        Path dir = KwikIt.workDir("clock-step-frequent");
        long floor = PROPAGATION_MS * 1_000_000L;
        List<String> under = new ArrayList<>();
        for (int k = 0; k < FREQUENT_RUNS; k++) {
            Run r = download(dir, "frequent-" + k, FREQUENT_PERIOD_MS);
            int[] steps = r.stepsInside();
            assertTrue(steps[0] >= 10 && steps[1] >= 10, "fewer than 10 steps each way inside download " + k + ":\n"
                    + r.serverStderr);
            System.out.printf(Locale.ROOT, "[it] clock step: frequent %d: %.2f Mbit/s, summary min RTT %.3f ms, bbr1's "
                    + "smallest %.3f ms, %s%n", k, r.mbps, r.summaryMinRtt / 1e6, r.controllerMinRtt / 1e6, LossyLink.load());
            if (r.summaryMinRtt < floor || r.controllerMinRtt < floor) {
                under.add(String.format(Locale.ROOT, "download %d: summary %d ns, bbr1 %d ns", k, r.summaryMinRtt,
                        r.controllerMinRtt));
            }
        }
        assertEquals(List.of(), under, "min RTT under the link's " + floor + " ns propagation delay");
    }

    /**
     * One server (its wall clock stepped every {@code stepPeriodMs}, or not stepped for 0), one checksummed
     * download through the emulator, the server's recording.
     */
    private static Run download(Path dir, String name, long stepPeriodMs) throws Exception {
        boolean stepClock = stepPeriodMs > 0;
        Path rec = dir.resolve(name + ".jfr").toAbsolutePath();
        Files.deleteIfExists(rec);
        ForkedJvm.Builder b = ForkedJvm.builder(name + "-server", KwikBulkServer.class.getName())
                .classPath(KwikIt.appClassPathWithByteBuddy())
                .dir(dir)
                .jvmArgs("-Xmx512m", "-XX:+UseSerialGC")
                .args("--keystore", KwikIt.keyStore().toString());
        if (stepClock) {
            // java.time.Clock is loaded already: the stepper retransforms it
            b.javaagent(KwikIt.testAgentJar("clock-stepper", ClockStepper.class, true), bootJar(dir) + "," + stepPeriodMs + "," + STEP_MS);
        }
        b.javaagent(KwikIt.agentJar(), "cc=bbr1;fix.kwik-stream-stall=on;log=warn;jfr=" + rec);
        KwikIt.ClientRun client;
        try (KwikIt.Server server = KwikIt.awaitPort(b.start())) {
            if (stepClock) {
                assertTrue(server.jvm.stderr().contains("[clock-stepper] instrumented java.time.Clock"), server.jvm.describe());
            }
            long delay = PROPAGATION_MS * 1_000_000L / 2;
            LinkProfile down = LinkProfile.builder().rate(RATE_BPS).delay(delay).bufferBdp(1, 2 * delay).build();
            LinkProfile up = LinkProfile.builder().rate(RATE_BPS).delay(delay).build();
            try (LinkEmulator em = LinkEmulator.start(new InetSocketAddress("127.0.0.1", server.port), up, down, 11)) {
                client = KwikIt.runClient(dir, name + "-client", null, Duration.ofSeconds(120),
                        "--port", Integer.toString(em.port()), "--mode", "down", "--bytes", Long.toString(BYTES),
                        "--seed", "17", "--stall-seconds", "8", "--stall-retries", "0",
                        // straight from the server first (not measured): JIT-compiles both ends
                        "--warmup-port", Integer.toString(server.port), "--warmup-bytes", "2000000");
            }
            assertTrue(client.allOk(1) && client.retries() == 0, "download not intact:\n" + client.describe + server.jvm.describe());
            server.jvm.closeStdin();
            assertEquals(0, server.jvm.waitFor(Duration.ofSeconds(60)), server.jvm.describe());
            Run run = new Run(name, client, server.jvm.stderr(), Double.parseDouble(client.results.get(0).group(6)));
            run.read(rec);
            return run;
        }
    }

    /** A finished download and what the server's recording says about its connection. */
    private static final class Run {
        final String name;
        final KwikIt.ClientRun client;
        final String serverStderr;
        final double mbps;
        long summaryMinRtt = -1;
        long rttSamples;
        long rttP50;
        long rttP95;
        long controllerMinRtt = Long.MAX_VALUE;

        /**
         * The server's wall-clock steps inside the measured download, {forward, backward}, placed by the
         * client's {@code System.nanoTime()} (printed).
         */
        int[] stepsInside() {
            Matcher mono = MONO.matcher(client.stdout);
            assertTrue(mono.find(), client.describe);
            long start = Long.parseLong(mono.group(1));
            long end = Long.parseLong(mono.group(2));
            int[] steps = new int[2];
            Matcher step = STEP.matcher(serverStderr);
            while (step.find()) {
                long at = Long.parseLong(step.group(2));
                if (at > start && at < end) {
                    steps[step.group(1).startsWith("+") ? 0 : 1]++;
                }
            }
            System.out.printf(Locale.ROOT, "[it] clock step: %s: %d forward and %d backward steps of %d ms inside the %.2f s download%n",
                    name, steps[0], steps[1], STEP_MS, (end - start) / 1e9);
            return steps;
        }

        Run(String name, KwikIt.ClientRun client, String serverStderr, double mbps) {
            this.name = name;
            this.client = client;
            this.serverStderr = serverStderr;
            this.mbps = mbps;
        }

        /** The emulated connection is the one that acknowledged the measured bytes (the warm-up moved fewer). */
        void read(Path rec) throws IOException {
            List<RecordedEvent> events = RecordingFile.readAllEvents(rec);
            String id = null;
            for (RecordedEvent e : events) {
                if (e.getEventType().getName().equals(EventNames.CONNECTION_SUMMARY)
                        && e.getString(EventFields.TRIGGER).equals("close") && e.getLong(EventFields.BYTES_ACKED) >= BYTES) {
                    assertTrue(id == null, "two close summaries of " + BYTES + " bytes in " + rec);
                    id = e.getString(EventFields.CONNECTION_ID);
                    summaryMinRtt = e.getLong(EventFields.MIN_RTT);
                    rttSamples = e.getLong(EventFields.RTT_SAMPLES);
                    rttP50 = e.getLong(EventFields.RTT_P50);
                    rttP95 = e.getLong(EventFields.RTT_P95);
                }
            }
            assertTrue(id != null, "no close summary of the download in " + rec);
            for (RecordedEvent e : events) {
                if (e.getEventType().getName().equals(EventNames.CONGESTION_STATE)
                        && id.equals(e.getString(EventFields.CONNECTION_ID)) && e.getLong(EventFields.MIN_RTT) > 0) {
                    controllerMinRtt = Math.min(controllerMinRtt, e.getLong(EventFields.MIN_RTT));
                }
            }
            assertTrue(controllerMinRtt != Long.MAX_VALUE, "no CongestionState of " + id + " in " + rec);
        }
    }

    private static Path bootJar;

    /** A jar holding only {@link WallClockOffset}, for the stepped JVM's bootstrap class path. */
    private static synchronized Path bootJar(Path dir) throws IOException {
        if (bootJar == null) {
            Path file = dir.resolve("clock-offset-" + ProcessHandle.current().pid() + ".jar");
            String entry = WallClockOffset.class.getName().replace('.', '/') + ".class";
            try (InputStream in = WallClockOffset.class.getClassLoader().getResourceAsStream(entry);
                 java.util.jar.JarOutputStream out = new java.util.jar.JarOutputStream(Files.newOutputStream(file))) {
                assertTrue(in != null, entry + " not on the test class path");
                out.putNextEntry(new java.util.jar.JarEntry(entry));
                in.transferTo(out);
                out.closeEntry();
            }
            bootJar = file;
        }
        return bootJar;
    }
}
