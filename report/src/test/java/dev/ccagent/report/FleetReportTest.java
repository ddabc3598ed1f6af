package dev.ccagent.report;

import dev.ccagent.jfr.EventFields;
import dev.ccagent.jfr.EventNames;
import dev.ccagent.jfr.ConnectionSummary;
import jdk.jfr.Name;
import jdk.jfr.Recording;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The fleet report over recordings written with the product's own event classes; every figure is
 * checked against what was planned into the events, or against the JDK's own recording parser.
 */
class FleetReportTest {

    /** An older agent's ConnectionSummary: no agentInstance, rttP95 or leftSlowStart. */
    @Name(EventNames.CONNECTION_SUMMARY)
    @StackTrace(false)
    static final class OldSummary extends jdk.jfr.Event {
        String library;
        String role;
        String connectionId;
        String canaryArm;
        String algorithm;
        String controller;
        long sequence;
        @Timespan(Timespan.NANOSECONDS)
        long lifetime;
        long bytesSent;
        long bytesAcked;
        long bytesLost;
        @Timespan(Timespan.NANOSECONDS)
        long rttP50;
    }

    @Name("test.Foreign")
    @StackTrace(false)
    static final class Foreign extends jdk.jfr.Event {
        String what;
    }

    record Run(String stdout, String stderr, int status) {
    }

    /** {@code ccagent report ARGS...}: args[0] is "report", the rest goes to the entry point the CLI calls. */
    static Run cli(String... args) {
        assertEquals("report", args[0]);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintWriter o = new PrintWriter(new OutputStreamWriter(out, StandardCharsets.UTF_8), true);
        PrintWriter e = new PrintWriter(new OutputStreamWriter(err, StandardCharsets.UTF_8), true);
        int rc = ReportCommandLine.run(Arrays.copyOfRange(args, 1, args.length), o, e);
        o.flush(); // as the CLI does at exit
        e.flush();
        return new Run(out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8), rc);
    }

    static List<SyntheticFleet.Plan> plans(String agent, int n, long seed, double canaryFactor) {
        return SyntheticFleet.plan(agent, n, 6, 1_000_000_000L, SyntheticFleet.twoArms(canaryFactor),
                new SplittableRandom(seed));
    }

    static Path write(Path file, List<SyntheticFleet.Plan> plans, boolean states) throws Exception {
        SyntheticFleet.write(file, plans, 6, 0, 2, states, true, new SplittableRandom(1));
        return file;
    }

    /** The JSON without the parts that name input files. */
    static String figures(FleetReport r) {
        String json = FleetOutput.json(r);
        return json.substring(json.indexOf(",\"connections\":"));
    }

    @Test
    void aSpinEpisodeRecordedSeveralTimesIsOneAlarm(@TempDir Path dir) throws Exception {
        SyntheticFleet.Plan p = onePlan("jvm-spin", "bbr1", 7);
        List<Class<? extends jdk.jfr.Event>> types = List.of(ConnectionSummary.class, dev.ccagent.jfr.CpuSpin.class);
        Path file = SyntheticFleet.record(dir.resolve("spin.jfr"), types, () -> {
            SyntheticFleet.summary(p, 1, 0, "close");
            // one episode as an agent records it: at detection, while it lasted, at its end
            for (String endedBy : List.of("ongoing", "ongoing", "progress")) {
                dev.ccagent.jfr.CpuSpin e = new dev.ccagent.jfr.CpuSpin();
                e.library = "kwik";
                e.connectionId = p.connectionId;
                e.episodeId = 42;
                e.endedBy = endedBy;
                e.commit();
            }
            // and an older agent's event (no episode id): an episode of its own
            dev.ccagent.jfr.CpuSpin old = new dev.ccagent.jfr.CpuSpin();
            old.library = "kwik";
            old.connectionId = p.connectionId;
            old.endedBy = "close";
            old.commit();
        });
        FleetReport report = FleetReport.read(List.of(file), new FleetReport.Options());
        FleetReport.Arm arm = report.arms().values().iterator().next();
        assertEquals(Integer.valueOf(2), arm.alarms.get("CpuSpin"), "two episodes: " + arm.alarms);
        RecordingReport single = RecordingReport.read(file);
        assertEquals(2, single.cpuSpinEpisodes().size(), single.text());
        assertEquals("progress", single.cpuSpinEpisodes().get(0).getString(EventFields.ENDED_BY), "the episode's last event");
    }

    /** One connection of one arm (ALGORITHM), planned from SEED. */
    static SyntheticFleet.Plan onePlan(String jvm, String algorithm, long seed) {
        return SyntheticFleet.plan(jvm, 1, 2, 1_000_000_000L,
                List.of(new SyntheticFleet.ArmModel("default", algorithm, 1.0, 4e6, 0.6, 50, 0.012)), new SplittableRandom(seed)).get(0);
    }

    /** A CpuSpin event of episode 43 of the Netty loop "nioEventLoopGroup-2-1" itself (not committed). */
    static dev.ccagent.jfr.CpuSpin loopSpin(String kind, String connections, int count, String endedBy) {
        dev.ccagent.jfr.CpuSpin e = new dev.ccagent.jfr.CpuSpin();
        e.library = "netty";
        e.connectionId = "";
        e.episodeId = 43;
        e.threadName = "nioEventLoopGroup-2-1";
        e.loopSpin = kind;
        e.loopConnections = connections;
        e.loopConnectionCount = count;
        e.endedBy = endedBy;
        return e;
    }

    @Test
    void aLoopLevelSpinIsListedOnceAsTheLoopsAndInNoArmsAlarms(@TempDir Path dir) throws Exception {
        SyntheticFleet.Plan p = onePlan("jvm-loop", "cubic", 8);
        List<Class<? extends jdk.jfr.Event>> types = List.of(ConnectionSummary.class, dev.ccagent.jfr.CpuSpin.class);
        Path file = SyntheticFleet.record(dir.resolve("loop.jfr"), types, () -> {
            SyntheticFleet.summary(p, 1, 0, "close");
            // one episode of the loop itself, as the agent records it: at detection, while it lasted, at its end
            long[] delays = {2_100_000_000L, 6_900_000_000L, 6_900_000_000L};
            String[] endedBy = {"ongoing", "ongoing", "progress"};
            for (int i = 0; i < 3; i++) {
                dev.ccagent.jfr.CpuSpin e = loopSpin("blocked", p.connectionId + ",0b0c", 2, endedBy[i]);
                e.loopTaskDelay = delays[i];
                e.episodeDuration = (2 + 5L * i) * 1_000_000_000L;
                e.cpuShare = 0.98;
                e.topFrames = "my.app.Handler.spin:12\nio.netty.channel.nio.NioEventLoop.run:600";
                e.commit();
            }
        });
        FleetReport report = FleetReport.read(List.of(file), new FleetReport.Options());
        assertTrue(report.arms().values().stream().allMatch(a -> a.alarms.isEmpty()), "no connection's alarm");
        assertEquals(1, report.loopSpins().size(), report.loopSpins().toString());
        FleetReport.LoopSpin s = report.loopSpins().get(0);
        assertEquals("progress", s.endedBy(), "the episode's last event");
        assertEquals(6_900_000_000L, s.taskDelayNanos());
        assertEquals("my.app.Handler.spin:12", s.topFrame());
        assertEquals(2, s.connections());
        String text = FleetOutput.text(report);
        assertTrue(text.contains("netty loop \"nioEventLoopGroup-2-1\" blocked: 12.0 s at 98% of a core, tasks 6.900 s late, "
                + "2 QUIC connections on it (" + p.connectionId + ",0b0c); ended by progress; at my.app.Handler.spin:12"), text);
        assertTrue(FleetOutput.json(report).contains("\"loopSpins\":[{\"since\":"), FleetOutput.json(report));
        // another JVM's episode 43 of a loop of the same name is another episode
        Path other = SyntheticFleet.record(dir.resolve("other.jfr"), types, () -> {
            loopSpin("polling", "0d0e", 1, "idle").commit();
        });
        assertEquals(2, FleetReport.read(List.of(file, other), new FleetReport.Options()).loopSpins().size());
        // a loop's allocation storm is the loop's too, in no arm's alarms
        Path storm = SyntheticFleet.record(dir.resolve("storm.jfr"), List.of(ConnectionSummary.class,
                dev.ccagent.jfr.SendPathAllocation.class), () -> {
            SyntheticFleet.summary(p, 1, 0, "close");
            for (long rate : new long[] {300L << 20, 400L << 20}) {
                dev.ccagent.jfr.SendPathAllocation e = new dev.ccagent.jfr.SendPathAllocation();
                e.library = "netty";
                e.connectionId = "";
                e.path = "event loop";
                e.threadName = "nioEventLoopGroup-2-1";
                e.allocationRate = rate;
                e.flagged = true;
                e.commit();
            }
        });
        FleetReport withStorm = FleetReport.read(List.of(storm), new FleetReport.Options());
        assertTrue(withStorm.arms().values().stream().allMatch(a -> a.alarms.isEmpty()), "no connection's alarm");
        assertEquals(1, withStorm.loopAllocationStorms().size());
        assertEquals(2, withStorm.loopAllocationStorms().get(0).windows);
        assertTrue(FleetOutput.text(withStorm).contains("netty loop \"nioEventLoopGroup-2-1\": 2 windows flagged, up to 400 MB/s"),
                FleetOutput.text(withStorm));
        assertTrue(FleetOutput.json(withStorm).contains("\"loopAllocationStorms\":[{\"library\":\"netty\""));
        Path html = dir.resolve("loop.html");
        FleetHtml.write(report, html);
        assertTrue(java.nio.file.Files.readString(html).contains("<h2>Event-loop spins</h2>"));
    }

    @Test
    void mergeOfTwoRecordingsEqualsOneRecordingOfTheirConnectionsAndDuplicatesCountOnce(@TempDir Path dir)
            throws Exception {
        List<SyntheticFleet.Plan> a = plans("aaaa0001", 60, 11, 1.5);
        List<SyntheticFleet.Plan> b = plans("bbbb0002", 70, 12, 1.5);
        List<SyntheticFleet.Plan> both = new ArrayList<>(a);
        both.addAll(b);
        Path fa = write(dir.resolve("a.jfr"), a, false);
        Path fb = write(dir.resolve("b.jfr"), b, false);
        Path one = write(dir.resolve("one.jfr"), both, false);

        FleetReport merged = FleetReport.read(List.of(fa, fb), new FleetReport.Options());
        FleetReport single = FleetReport.read(List.of(one), new FleetReport.Options());
        assertEquals(130, merged.connections());
        assertEquals(figures(single), figures(merged));
        assertEquals(0, merged.exitStatus());
        // the planned figures, not just self-consistency: connections per arm and the median goodput
        long planned = a.stream().filter(p -> p.arm.label().equals("canary")).count()
                + b.stream().filter(p -> p.arm.label().equals("canary")).count();
        assertEquals(planned, merged.arms().get("canary bbr1").connections);
        double[] plannedGoodput = both.stream().filter(p -> p.arm.label().equals("default"))
                .mapToDouble(p -> p.bytesAcked * 8 / (p.lifetimeNanos / 1e9)).sorted().toArray();
        assertEquals(dev.ccagent.report.stats.Quantiles.ofSorted(plannedGoodput, 0.5),
                dev.ccagent.report.stats.Quantiles.ofSorted(merged.arms().get("default stock").goodput, 0.5),
                1e-6 * plannedGoodput[plannedGoodput.length / 2]);

        // the same file twice (by copy), and the same path twice: counted once, and the copy is named
        Path copy = Files.copy(fa, dir.resolve("a-copy.jfr"));
        Run run = cli("report", "--json", fa.toString(), fb.toString(), copy.toString(), fa.toString());
        assertEquals(0, run.status(), run.stderr());
        assertTrue(run.stdout().contains("\"status\":\"duplicate\""), run.stdout());
        assertTrue(run.stdout().contains("\"duplicateOf\":" + FleetOutput.str(fa.toString())), run.stdout());
        assertTrue(run.stdout().contains(figures(merged).substring(0, 40)), run.stdout());
        assertTrue(run.stdout().endsWith(figures(merged)), "same figures as without the duplicates");
        Run text = cli("report", fa.toString(), fb.toString(), copy.toString());
        assertTrue(text.stdout().contains("the same recording as " + fa + " - counted once"), text.stdout());
    }

    @Test
    void theSameEventsInTwoDifferentFilesAreCountedOnce(@TempDir Path dir) throws Exception {
        List<SyntheticFleet.Plan> a = plans("cccc0003", 40, 21, 1.0);
        Path early = dir.resolve("early.jfr");
        Path late = dir.resolve("late.jfr");
        try (Recording rec = new Recording()) {
            rec.enable(ConnectionSummary.class);
            rec.start();
            for (SyntheticFleet.Plan p : a.subList(0, 20)) {
                SyntheticFleet.summary(p, 1, 0, "close");
            }
            rec.dump(early);                      // 20 connections
            for (SyntheticFleet.Plan p : a.subList(20, 40)) {
                SyntheticFleet.summary(p, 1, 0, "close");
            }
            rec.stop();
            rec.dump(late);                       // the same 20 again, and 20 more
        }
        assertEquals(20, RecordingFile.readAllEvents(early).size(), "JDK parser: first dump");
        assertEquals(40, RecordingFile.readAllEvents(late).size(), "JDK parser: second dump overlaps the first");
        FleetReport r = FleetReport.read(List.of(early, late), new FleetReport.Options());
        assertEquals(40, r.connections());
        assertEquals(20, r.duplicateSummaries());
        assertTrue(FleetOutput.text(r).contains("20 connection summaries appeared in more than one recording"));
        assertEquals(figures(FleetReport.read(List.of(late), new FleetReport.Options())), figures(r));
    }

    @Test
    void badInputsGetOneLineEachAndTheRestIsReported(@TempDir Path dir) throws Exception {
        Path good = write(dir.resolve("good.jfr"), plans("dddd0004", 50, 31, 1.0), true);
        Path empty = Files.write(dir.resolve("empty.jfr"), new byte[0]);
        byte[] whole = Files.readAllBytes(write(dir.resolve("whole.jfr"), plans("eeee0005", 50, 32, 1.0), true));
        Path truncated = Files.write(dir.resolve("truncated.jfr"), Arrays.copyOf(whole, whole.length * 2 / 3));
        Files.delete(dir.resolve("whole.jfr"));
        Path notJfr = Files.writeString(dir.resolve("notes.jfr"), "this is not a flight recording");
        Path foreign = SyntheticFleet.record(dir.resolve("foreign.jfr"), List.of(Foreign.class), () -> {
            for (int i = 0; i < 10; i++) {
                Foreign f = new Foreign();
                f.what = "x" + i;
                f.commit();
            }
        });
        Path old = SyntheticFleet.record(dir.resolve("old-agent.jfr"), List.of(OldSummary.class), () -> {
            for (int i = 0; i < 12; i++) {
                OldSummary s = new OldSummary();
                s.library = "kwik";
                s.role = "server";
                s.connectionId = "01d0" + i;
                s.canaryArm = i % 2 == 0 ? "default" : "canary";
                s.algorithm = i % 2 == 0 ? "stock" : "bbr1";
                s.controller = i % 2 == 0 ? "stock" : "ccagent";
                s.lifetime = 2_000_000_000L;
                s.bytesSent = 1_010_000;
                s.bytesAcked = 1_000_000;
                s.bytesLost = 10_000;
                s.rttP50 = 40_000_000;
                s.commit();
            }
        });
        Path missing = dir.resolve("missing.jfr");

        Run run = cli("report", dir.toString(), missing.toString());
        String err = run.stderr();
        assertEquals(1, run.status(), err);
        assertTrue(err.contains(empty + ": empty file"), err);
        assertTrue(err.contains(truncated + ": truncated or damaged after ") || err.contains(truncated
                + ": not a readable JFR recording"), err);
        assertTrue(err.contains(notJfr + ": not a readable JFR recording"), err);
        assertTrue(err.contains(foreign + ": no ccagent events among its 10 events"), err);
        assertTrue(err.contains(missing + ": no such file or directory"), err);
        assertFalse(err.contains(good.toString()), "the good file has no problem line: " + err);
        assertFalse(err.contains(old.toString()), "an older agent's file is read, not an error: " + err);
        // the rest of the report: the good file's 50 connections and the old agent's 12
        String out = run.stdout();
        assertTrue(out.contains(old + ": its ConnectionSummary events lack agentInstance, appLimitedTime, leftSlowStart, "
                + "rttP95 (another agent version)"), out);
        FleetReport r = FleetReport.read(List.of(good, old), new FleetReport.Options());
        assertTrue(r.connections() >= 62, "connections " + r.connections());
        assertTrue(out.contains(r.connections() + " connections in 2 arms"), out);
        assertTrue(out.contains("VERDICTS against the baseline arm default stock"), out);
        // the old agent's connections count in goodput but not in "left slow start"
        FleetReport oldOnly = FleetReport.read(List.of(old), new FleetReport.Options());
        assertEquals(6, oldOnly.arms().get("default stock").goodput.length);
        assertEquals(0, oldOnly.arms().get("default stock").goodputLeftSlowStart.length);
        assertEquals(4e6, oldOnly.arms().get("default stock").goodput[0], 1);
        assertEquals(0, oldOnly.exitStatus());
    }

    @Test
    void recordingsWithoutSummariesAreMeasuredFromCongestionState(@TempDir Path dir) throws Exception {
        List<SyntheticFleet.Plan> a = plans("ffff0006", 30, 41, 1.0);
        Path f = dir.resolve("states-only.jfr");
        SyntheticFleet.write(f, a, 6, 20, 0, true, false, new SplittableRandom(2));
        FleetReport r = FleetReport.read(List.of(f), new FleetReport.Options());
        assertEquals(30, r.connections());
        for (FleetReport.Arm arm : r.arms().values()) {
            assertEquals(arm.connections, arm.fromStates);
            assertTrue(arm.rttP50Millis.length > 0);
            assertTrue(arm.secondsInMode.size() >= 2, arm.secondsInMode.toString());
            // mode time comes from connections with two periodic samples or more (six rounds; late starters have
            // fewer), whatever order the file hands the samples out in
            long timed = a.stream().filter(p -> (p.arm.label() + " " + p.arm.algorithm()).equals(arm.name))
                    .filter(p -> Math.min(p.rounds, 6 - p.startRound) >= 2).count();
            assertTrue(timed > 0, arm.name);
            assertEquals(timed, arm.modeTimedConnections, arm.name);
        }
        String text = FleetOutput.text(r);
        assertTrue(text.contains("(no summary)"), text);
        assertTrue(text.contains("between periodic CongestionState samples, on "), text);
    }

    /** One periodic CongestionState of connection "c1" (arm default, newreno) in {@code mode}, standing for {@code weight}. */
    private static void weightedState(String mode, double weight) throws InterruptedException {
        dev.ccagent.jfr.CongestionState s = new dev.ccagent.jfr.CongestionState();
        s.library = "kwik";
        s.connectionId = "c1";
        s.canaryArm = "default";
        s.algorithm = "newreno";
        s.mode = mode;
        s.trigger = "periodic";
        s.weight = weight;
        s.commit();
        Thread.sleep(20); // the next sample later: the connection's samples span time
    }

    @Test
    void modeTimeCountsEachSampleByItsWeightAndTheReportNamesTheSpanItJudged(@TempDir Path dir) throws Exception {
        java.time.Instant before = java.time.Instant.now();
        Path f = SyntheticFleet.record(dir.resolve("weighted.jfr"), List.of(dev.ccagent.jfr.CongestionState.class), () -> {
            weightedState("slow start", 1);
            weightedState("congestion avoidance", 3); // a sampled event: it stands for three periods
            weightedState("congestion avoidance", 1);
        });
        java.time.Instant after = java.time.Instant.now();
        FleetReport r = FleetReport.read(List.of(f), new FleetReport.Options());
        FleetReport.Arm arm = r.arms().get("default newreno");
        assertNotNull(arm, r.arms().keySet().toString());
        double total = arm.secondsInMode.values().stream().mapToDouble(Double::doubleValue).sum();
        // by weight 1 : 4 (unweighted, by count, it would be 1 : 2)
        assertEquals(0.2, arm.secondsInMode.get("slow start") / total, 1e-9, arm.secondsInMode.toString());

        assertNotNull(r.spanFirst());
        assertTrue(!r.spanFirst().isBefore(before) && !r.spanLast().isAfter(after) && r.spanLast().isAfter(r.spanFirst()),
                before + " <= " + r.span() + " <= " + after);
        String text = FleetOutput.text(r);
        assertTrue(text.contains("time span judged: " + r.spanFirst() + " to " + r.spanLast() + " ("), text);
        String json = FleetOutput.json(r);
        assertTrue(json.contains("\"span\":{\"first\":\"" + r.spanFirst() + "\",\"last\":\"" + r.spanLast() + "\",\"seconds\":"),
                json);
        Path html = dir.resolve("weighted.html");
        FleetHtml.write(r, html);
        assertTrue(Files.readString(html).contains("Time span judged: " + r.span()), "the page names the span");
    }

    @Test
    void htmlAtTwoThousandConnectionsIsOneFileOfBoundedSizeVerdictsFirst(@TempDir Path dir) throws Exception {
        List<SyntheticFleet.Plan> a = SyntheticFleet.plan("12340007", 2000, 4, 1_000_000_000L,
                SyntheticFleet.twoArms(1.3), new SplittableRandom(51));
        Path f = dir.resolve("big.jfr");
        SyntheticFleet.write(f, a, 4, 5, 0, true, true, new SplittableRandom(3));
        Path html = dir.resolve("report.html");
        Run run = cli("report", "--html", html.toString(), f.toString());
        assertEquals(0, run.status(), run.stderr());
        String page = Files.readString(html);
        assertTrue(page.indexOf("<h2>Verdicts</h2>") < page.indexOf("CDF"), "verdict table first");
        // deterministic: the connections from seed 51, the bootstrap from the report's seed 1: odds 0
        assertTrue(page.contains(">better<"), "1.3x goodput at 1,000 connections per arm is found");
        assertFalse(page.contains("src=\"http") || page.contains("<script"), "self-contained, no scripts");
        // one line per arm, not per connection: 4 CDFs x 2 arms + 3 series x 2 arms
        int polylines = page.split("<polyline").length - 1;
        assertEquals(4 * 2 + 3 * 2, polylines);
        assertTrue(page.length() < 400_000, "page size " + page.length());
        assertTrue(page.contains("Pacing stalls (information)"));
    }

    /** Fallback events (the first of a cause, then summaries) are added up per cause in every form of the report. */
    @Test
    void fallbacksAreCountedPerCauseInTextJsonAndHtml(@TempDir Path dir) throws Exception {
        Path f = write(dir.resolve("fb.jfr"), plans("abcd0009", 20, 62, 1.0), false);
        Path g = SyntheticFleet.record(dir.resolve("fallbacks.jfr"), List.of(dev.ccagent.jfr.Fallback.class), () -> {
            long[][] counts = {{1, 1}, {4, 5}, {2, 7}};
            for (int i = 0; i < counts.length; i++) {
                dev.ccagent.jfr.Fallback e = new dev.ccagent.jfr.Fallback();
                e.kind = i == 0 ? "first" : "summary";
                e.where = "netty connection accounting";
                e.exception = "java.lang.IllegalStateException";
                e.consequence = "the connection runs bbr2_gcongestion (arm default:bbr) but is not counted";
                e.count = counts[i][0];
                e.total = counts[i][1];
                e.commit();
            }
            dev.ccagent.jfr.Fallback other = new dev.ccagent.jfr.Fallback();
            other.kind = "first";
            other.where = "kwik observe";
            other.exception = "java.lang.NullPointerException";
            other.consequence = "the connection is not observed";
            other.count = 1;
            other.total = 1;
            other.commit();
        });
        Run text = cli("report", f.toString(), g.toString());
        assertEquals(0, text.status(), text.stderr());
        assertTrue(text.stdout().contains("fallbacks (a part of the agent failed or was refused"), text.stdout());
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("  7 of netty connection accounting"
                + " \\(java.lang.IllegalStateException\\), \\S+ to \\S+: the connection runs bbr2_gcongestion").matcher(text.stdout());
        assertTrue(m.find(), text.stdout());
        assertTrue(text.stdout().indexOf("7 of netty") < text.stdout().indexOf("1 of kwik observe"), "most frequent first");
        Run alone = cli("report", g.toString());
        assertTrue(alone.stdout().contains("no connections found") && alone.stdout().contains("  7 of netty connection accounting"),
                "a recording with fallbacks and no connection still shows them (they may be why):\n" + alone.stdout());
        String json = cli("report", "--json", f.toString(), g.toString()).stdout();
        assertTrue(json.contains("\"fallbacks\":[{\"where\":\"netty connection accounting\",\"exception\":"
                + "\"java.lang.IllegalStateException\",\"count\":7,"), json);
        Path html = dir.resolve("fb.html");
        assertEquals(0, cli("report", "--html", html.toString(), f.toString(), g.toString()).status());
        String page = Files.readString(html);
        assertTrue(page.contains("<h2>Fallbacks</h2>") && page.contains("<tr><td>7</td><td class=\"l\">netty connection accounting"),
                page.substring(Math.max(0, page.indexOf("Fallbacks") - 100)));
    }

    /**
     * ModuleVerdict events: each verdict once however often the recording repeats it (the agent writes it again at
     * every chunk start, with the same verdict time), skipped loaders named with their reason per module, the loaders
     * applied counted; in the text and the HTML, also without connections.
     */
    @Test
    void moduleVerdictsListEverySkipOnceWithItsReason(@TempDir Path dir) throws Exception {
        Path f = write(dir.resolve("mv-conns.jfr"), plans("abcd0010", 20, 62, 1.0), false);
        String kwik = "kwik 0.10.x (tech.kwik.core)";
        String hidden = "type dev.ccagent.agent.kwik.KwikHooks not found";
        Path g = SyntheticFleet.record(dir.resolve("verdicts.jfr"), List.of(dev.ccagent.jfr.ModuleVerdict.class), () -> {
            verdict("at verdict", kwik, "0.10.9", "app@1a", "applied", "", 1_000);
            verdict("at verdict", kwik, "0.10.9", "webapp@2b", "skipped", hidden, 2_000);
            verdict("chunk start", kwik, "0.10.9", "app@1a", "applied", "", 1_000); // repeats: counted once
            verdict("chunk start", kwik, "0.10.9", "webapp@2b", "skipped", hidden, 2_000);
            verdict("at verdict", kwik, "0.10.9", "webapp@3c", "skipped", hidden, 3_000);
            verdict("at verdict", "Netty QUIC 4.2.x (io.netty.handler.codec.quic)", "", "app@1a", "skipped",
                    "kwik is on the module path", 4_000);
        });
        Run text = cli("report", f.toString(), g.toString());
        assertEquals(0, text.status(), text.stderr());
        String out = text.stdout();
        assertTrue(out.contains("\nmodule verdicts (each target module's verdict per class loader, once however often the"
                + " recordings repeat it):\n"
                + "  " + kwik + " version 0.10.9: applied in 1 class loader, skipped in 2\n"
                + "    skipped in webapp@2b, webapp@3c: " + hidden + "\n"
                + "  Netty QUIC 4.2.x (io.netty.handler.codec.quic): applied in 0 class loaders, skipped in 1\n"
                + "    skipped in app@1a: kwik is on the module path\n"), out);
        Run alone = cli("report", g.toString());
        assertTrue(alone.stdout().contains("no connections found") && alone.stdout().contains("    skipped in webapp@2b, webapp@3c: "),
                "a recording with verdicts and no connection still shows them (a skip may be why):\n" + alone.stdout());
        Run none = cli("report", f.toString());
        assertFalse(none.stdout().contains("module verdicts"), "no section without ModuleVerdict events:\n" + none.stdout());
        Path html = dir.resolve("mv.html");
        assertEquals(0, cli("report", "--html", html.toString(), f.toString(), g.toString()).status());
        String page = Files.readString(html);
        assertTrue(page.contains("<h2>Module verdicts</h2>") && page.contains("<tr><td class=\"l\">" + kwik
                + "</td><td class=\"l\">0.10.9</td><td>1</td><td>2</td><td class=\"l wl\">webapp@2b, webapp@3c: " + hidden
                + "</td></tr>"), page.substring(Math.max(0, page.indexOf("Module verdicts") - 100)));
    }

    private static void verdict(String kind, String module, String version, String loader, String verdict, String reason,
                                long time) throws ReflectiveOperationException {
        dev.ccagent.jfr.ModuleVerdict e = new dev.ccagent.jfr.ModuleVerdict();
        String[] fields = {EventFields.KIND, EventFields.LIBRARY, EventFields.MODULE, EventFields.LIBRARY_VERSION,
            EventFields.CLASS_LOADER, EventFields.VERDICT, EventFields.REASON};
        String[] values = {kind, module.startsWith("kwik") ? "kwik" : "netty", module, version, loader, verdict, reason};
        for (int i = 0; i < fields.length; i++) {
            dev.ccagent.jfr.ModuleVerdict.class.getField(fields[i]).set(e, values[i]);
        }
        e.verdictTime = time;
        e.commit();
    }

    @Test
    void jsonNamesEveryDocumentedField(@TempDir Path dir) throws Exception {
        Path f = write(dir.resolve("x.jfr"), plans("abcd0008", 40, 61, 1.0), false);
        Run run = cli("report", "--json", "--seed", "5", f.toString());
        assertEquals(0, run.status(), run.stderr());
        String json = run.stdout();
        for (String field : new String[] {"\"schema\":\"ccagent-report/1\"", "\"seed\":5", "\"inputs\":[",
            "\"duplicateSummaries\":", "\"baseline\":\"default stock\"", "\"arms\":[", "\"goodputBps\":{\"all\":",
            "\"leftSlowStart\":", "\"rttP50Ms\":", "\"rttP95Ms\":", "\"lossRate\":{\"aggregate\":", "\"comparisons\":[",
            "\"metric\":\"goodput\"", "\"ciLow\":", "\"ciHigh\":", "\"p\":", "\"verdict\":", "\"connectionsNeededPerArm\":",
            "\"rollbacks\":[", "\"loopSpins\":[", "\"loopAllocationStorms\":[", "\"fallbacks\":[", "\"exitStatus\":0"}) {
            assertTrue(json.contains(field), field + " in " + json);
        }
        assertEquals(json, cli("report", "--json", "--seed", "5", f.toString()).stdout(), "same seed, same report");
        assertNotNull(FleetReport.read(List.of(f), new FleetReport.Options()).baseline());
        assertEquals(2, cli("report", "--no-such-flag", f.toString()).status());
    }
    @Test
    void goodputIsOverTransferTimeWhenTheAgentMeasuredOneElseOverLifetime(@TempDir Path dir) throws Exception {
        Path f = SyntheticFleet.record(dir.resolve("transfer.jfr"), List.of(ConnectionSummary.class), () -> {
            for (int i = 0; i < 4; i++) {
                ConnectionSummary s = new ConnectionSummary();
                s.agentInstance = "7777aaaa";
                s.library = "kwik";
                s.role = "server";
                s.connectionId = "7a" + i;
                s.canaryArm = "default";
                s.algorithm = "stock";
                s.controller = "stock";
                s.trigger = "close";
                s.lifetime = 3_000_000_000L;
                // two with a transfer time of 1 s, two of an agent that measured none (0)
                s.transferTime = i < 2 ? 1_000_000_000L : 0;
                s.bytesSent = 1_000_000;
                s.bytesAcked = 1_000_000;
                s.rttP50 = 50_000_000;
                s.rttP95 = 60_000_000;
                s.leftSlowStart = true;
                s.commit();
            }
        });
        FleetReport r = FleetReport.read(List.of(f), new FleetReport.Options());
        double[] goodput = r.arms().get("default stock").goodput;
        assertEquals(4, goodput.length);
        // sorted: the two over lifetime (3 s), then the two over transfer time (1 s)
        assertEquals(8e6 / 3, goodput[0], 1);
        assertEquals(8e6 / 3, goodput[1], 1);
        assertEquals(8e6, goodput[2], 1);
        assertEquals(8e6, goodput[3], 1);
        assertTrue(r.inputs().get(0).missingFields.isEmpty(), "transferTime present: nothing missing");
    }
}
