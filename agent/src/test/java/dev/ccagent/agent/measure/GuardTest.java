package dev.ccagent.agent.measure;

import dev.ccagent.agent.config.AgentArgs;
import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.runtime.AgentRuntime;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import javax.management.ObjectName;
import java.lang.management.ManagementFactory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The guard's decisions on synthetic closed connections (the end-to-end case is KwikGuardTest). */
class GuardTest {

    @AfterEach
    void detach() {
        AgentRuntime.setConfig(null);
        Guard.reEnableAll("test");
    }

    private static AgentConfig config(String args) {
        AgentArgs.Result r = AgentArgs.parse(args);
        assertTrue(r.ok(), r.problems().toString());
        AgentRuntime.setConfig(r.config());
        return r.config();
    }

    /** The kwik arms of the configuration {@link #kwikArms} parsed: its default arm and its first canary arm. */
    private ArmStats base;
    private ArmStats canary;

    /** Parses and applies {@code args}, then finds {@link #base} and {@link #canary}, kwik's arms of that configuration. */
    private AgentConfig kwikArms(String args) {
        AgentConfig config = config(args);
        base = ArmStats.of("kwik", "default", config.defaultArm().algorithm());
        canary = ArmStats.of("kwik", "canary", config.canaryArms().get(0).algorithm());
        return config;
    }

    /** One server close: 1 MB sent and acknowledged, 800 packets. */
    static void close(ArmStats arm, double lossRate, double rttMillis, double goodputBytesPerSecond, long at) {
        Guard.onClosed(arm, 1_000_000, (long) (lossRate * 1_000_000), 800, (long) (rttMillis * 1e6), 1_000_000,
                (long) (1e6 / goodputBytesPerSecond * 1e9), at);
    }

    /**
     * A close on each arm at {@code now} (the canary's 1 ns later), then the guard's evaluation a second
     * later; returns that second.
     */
    static long closeBothAndEvaluate(ArmStats base, double baseLoss, double baseRtt, double baseGoodput, ArmStats canary,
                                     double lossRate, double rttMillis, double goodput, long now) {
        close(base, baseLoss, baseRtt, baseGoodput, now);
        close(canary, lossRate, rttMillis, goodput, now + 1);
        Guard.evaluate(now + 1_000_000_000L);
        return now + 1_000_000_000L;
    }

    @Test
    void lossyCanaryIsRolledBackOnceItsTestCrossesAndSetReEnablesItWithAFreshTest() throws Exception {
        AgentConfig config = kwikArms("cc=stock;canary=cubic:50%;guard=on;guard.min-connections=6;guard.window=60s");
        long now = 1_000_000_000_000L;
        int pairs = 0;
        while (!canary.isRolledBack() && pairs < 100) {
            close(base, 0.001, 50, 2e6, now);
            close(canary, 0.10, 50, 2e6, now + 1);
            now += 2_000_000_000L;
            Guard.evaluate(now);
            pairs++;
        }
        // every pair worse: the mixture statistic reaches 1/(0.01/4) = 400 on the 12th (MixtureTestTest)
        assertEquals(12, pairs, canary.getRollbackEvidence());
        assertFalse(base.isRolledBack(), "the baseline is never rolled back");
        String ev = canary.getRollbackEvidence();
        assertTrue(ev.startsWith("kwik canary:cubic worse than default:stock on loss ratio: 12 of 12 canary connections"), ev);
        assertTrue(ev.contains("e-value") && ev.contains("1/(alpha/4) = 400") && ev.contains("12 vs 12 connections, 12 pairs")
                && ev.contains("median loss rate 10.00% vs 0.10%"), ev);
        AgentConfig.Arm canaryArm = config.canaryArms().get(0);
        assertSame(config.defaultArm(), Guard.redirect("kwik", config, canaryArm), "new connections go to the default arm");
        assertSame(config.defaultArm(), Guard.redirect("kwik", config, config.defaultArm()));
        Object rolled = ManagementFactory.getPlatformMBeanServer().getAttribute(
                new ObjectName("dev.ccagent:type=Arm,library=kwik,arm=canary,algorithm=cubic"), "RolledBack");
        assertEquals(Boolean.TRUE, rolled);
        Guard.reEnableAll("set");
        assertFalse(canary.isRolledBack());
        assertSame(canaryArm, Guard.redirect("kwik", config, canaryArm));
        // a fresh test: the closes before the re-enable are not judged again
        Guard.evaluate(now + 2_000_000_000L);
        assertFalse(canary.isRolledBack(), canary.getRollbackEvidence());
        for (int i = 0; i < 11; i++) {
            now += 2_000_000_000L;
            close(base, 0.001, 50, 2e6, now);
            close(canary, 0.10, 50, 2e6, now + 1);
            Guard.evaluate(now);
        }
        assertFalse(canary.isRolledBack(), "11 new pairs are not enough: " + canary.getRollbackEvidence());
        // the test's state, live, over JMX
        Object state = ManagementFactory.getPlatformMBeanServer().getAttribute(
                new ObjectName("dev.ccagent:type=Arm,library=kwik,arm=canary,algorithm=cubic"), "GuardState");
        assertTrue(String.valueOf(state).startsWith("11 pairs (11 vs 11 connections), rollback at e-value 400 after 6 pairs;"
                + " loss 11/11 worse e=229 rtt 0/11 worse"), String.valueOf(state));
    }

    @Test
    void aCanaryWorseByLessThanTheMarginIsNotRolledBackAndOneWorseByMoreIs() {
        kwikArms("cc=stock;canary=bbr3:50%;guard=on;guard.rtt-p95-increase=10%");
        long now = 1_000_000_000_000L;
        java.util.SplittableRandom r = new java.util.SplittableRandom(3);
        for (int i = 0; i < 3_000; i++) {
            // RTT p95 5% higher, every connection: within the 10% margin, however many pairs
            double rtt = 50 * Math.exp(0.2 * r.nextGaussian());
            now = closeBothAndEvaluate(base, 0, rtt, 2e6,
                    canary, 0, 1.05 * 50 * Math.exp(0.2 * r.nextGaussian()), 2e6, now);
        }
        assertFalse(canary.isRolledBack(), canary.getRollbackEvidence());
        // then twice the RTT: rolled back on RTT within a few dozen pairs (the test's later starts), not hundreds
        int pairs = 0;
        for (; pairs < 80 && !canary.isRolledBack(); pairs++) {
            now = closeBothAndEvaluate(base, 0, 50 * Math.exp(0.2 * r.nextGaussian()), 2e6,
                    canary, 0, 100 * Math.exp(0.2 * r.nextGaussian()), 2e6, now);
        }
        System.out.println("[guard] RTT doubled after 3,000 pairs within the margin: rolled back after " + pairs + " pairs");
        // deterministic: seed 3 and the closes' own clock; 43 pairs in every run (13 gate runs, 2026-12-04): odds 0
        assertTrue(canary.isRolledBack(), "not rolled back within 80 pairs");
        assertTrue(canary.getRollbackEvidence().contains("on rtt p95 increase"), canary.getRollbackEvidence());
    }

    @Test
    void slowerGoodputIsRolledBack() {
        kwikArms("cc=stock;canary=bbr3:50%;guard=on");
        long now = 1_000_000_000_000L;
        for (int i = 0; i < 40 && !canary.isRolledBack(); i++) {
            now = closeBothAndEvaluate(base, 0, 50, 2e6, canary, 0, 50, 1e6, now);
        }
        assertTrue(canary.getRollbackEvidence().contains("on goodput decrease")
                && canary.getRollbackEvidence().contains("median goodput 8.00 Mbit/s vs 16.00 Mbit/s"), canary.getRollbackEvidence());
    }

    @Test
    void closesFarApartAreNotPaired() {
        kwikArms("cc=stock;canary=cubic:50%;guard=on;guard.window=10s;guard.min-connections=5");
        long now = 1_000_000_000_000L;
        for (int i = 0; i < 50; i++) {
            close(i % 2 == 0 ? base : canary, i % 2 == 0 ? 0 : 0.5, 50, 2e6, now);
            now += 11_000_000_000L; // 11 s between closes: beyond guard.window
            Guard.evaluate(now);
        }
        assertFalse(canary.isRolledBack(), canary.getRollbackEvidence());
        assertEquals(0, canary.judge.pairs);
    }

    @Test
    void sendLoopAlarmsAreInformationAndCpuSpinsNeedAnExcessOverTheBaseline() throws Exception {
        kwikArms("cc=stock;canary=bbr1:50%;guard=on");
        dev.ccagent.agent.control.Control.register(() -> AgentRuntime.setConfig(null),
                (c, how) -> AgentRuntime.setConfig(c));
        long now = 1_000_000_000_000L;
        long alarms = canary.getAlarms();
        for (int i = 0; i < 1_000; i++) {
            canary.alarm("send-loop spin");
            canary.alarm("ACK-only send loop");
        }
        Guard.evaluate(now);
        assertFalse(canary.isRolledBack(), "a client can cause these: " + canary.getRollbackEvidence());
        assertEquals(alarms + 2_000, canary.getAlarms(), "counted");
        // CPU spins on both arms alike (a starved host): no rollback
        for (int i = 0; i < 60; i++) {
            base.cpuSpin("b" + i, now++);
            canary.cpuSpin("c" + i, now++);
            Guard.evaluate(now);
        }
        assertFalse(canary.isRolledBack(), canary.getRollbackEvidence());
        Guard.reEnableAll("test");
        // one spinning connection, however many episodes, is one connection
        for (int i = 0; i < 50; i++) {
            canary.cpuSpin("same", now++);
        }
        Guard.evaluate(now);
        assertFalse(canary.isRolledBack(), canary.getRollbackEvidence());
        for (int i = 0; i < 11; i++) {
            canary.cpuSpin("spinning-" + i, now++);
        }
        Guard.evaluate(now);
        assertTrue(canary.isRolledBack(), "12 canary connections spinning, none of the baseline's");
        assertTrue(canary.getRollbackEvidence().contains("on cpu spin")
                && canary.getRollbackEvidence().contains("12 canary vs 0 baseline connections with a CPU spin episode"),
                canary.getRollbackEvidence());
        javax.management.MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        ObjectName control = new ObjectName(dev.ccagent.agent.control.Control.OBJECT_NAME);
        String[] arms = (String[]) server.getAttribute(control, "Arms");
        assertTrue(java.util.Arrays.stream(arms).anyMatch(l -> l.startsWith("kwik canary:bbr1") && l.contains("ROLLED BACK")),
                java.util.Arrays.toString(arms));
        // an unrelated change keeps the rollback; a canary decision re-enables the arm
        server.invoke(control, "set", new Object[] {"log=info"}, new String[] {String.class.getName()});
        assertTrue(canary.isRolledBack());
        // bounds are checked by set as at start, naming the problem
        Exception refused = org.junit.jupiter.api.Assertions.assertThrows(Exception.class, () -> server.invoke(control, "set",
                new Object[] {"guard.min-connections=5000"}, new String[] {String.class.getName()}));
        Throwable cause = refused;
        while (cause.getCause() != null && !(cause instanceof IllegalArgumentException)) {
            cause = cause.getCause();
        }
        String why = String.valueOf(cause.getMessage());
        assertTrue(why.contains("guard.min-connections=5000: 5000 is outside 5..2048"), why);
        assertTrue(canary.isRolledBack(), "a refused set changes nothing");
        server.invoke(control, "set", new Object[] {"canary=bbr1:50%"}, new String[] {String.class.getName()});
        assertFalse(canary.isRolledBack());
    }

    @Test
    void guardOffOnlyCounts() {
        kwikArms("cc=stock;canary=newreno:50%;guard.min-connections=5");
        long now = 1_000_000_000_000L;
        for (int i = 0; i < 40; i++) {
            close(base, 0, 50, 2e6, now);
            close(canary, 0.5, 500, 2e5, now + 1);
            canary.cpuSpin("c" + i, now);
            now += 1_000_000_000L;
            Guard.evaluate(now);
        }
        assertFalse(canary.isRolledBack(), "guard is off by default");
    }

    /** Netty QUIC's split: canary arms against netty.cc; only server connections are judged. */
    @Test
    void nettyCanaryIsJudgedAgainstNettyCcAndClientConnectionsAreNot() {
        AgentConfig config = config("netty.cc=bbr;netty.canary=reno:50%;guard=on;guard.min-connections=6;guard.window=60s");
        AgentConfig.Arm canaryArm = config.netty().canaryArms().get(0);
        ConnectionMeter[] clients = new ConnectionMeter[12];
        long t = 1_000_000_000L;
        long closedBefore = ArmStats.of("netty", "canary", "reno").getClosedConnections(); // other tests' closes
        for (int i = 0; i < 12; i++) {
            // client connections of the canary arm with terrible figures: measured, never judged
            clients[i] = meter("client", "canary", "reno", t, 200_000_000L);
            clients[i].close();
        }
        ArmStats canary = ArmStats.find("netty", "canary", "reno");
        assertEquals(closedBefore + 12, canary.getClosedConnections(), "client connections are measured");
        Guard.evaluate(System.nanoTime());
        for (int i = 0; i < 12; i++) {
            meter("server", "default", "bbr", t, 50_000_000L + 1_000_000L * i).close();
        }
        Guard.evaluate(System.nanoTime());
        assertFalse(canary.isRolledBack(), "judged on client connections");
        for (int i = 0; i < 12; i++) {
            meter("server", "canary", "reno", t, 150_000_000L + 1_000_000L * i).close();
        }
        Guard.evaluate(System.nanoTime());
        assertTrue(canary.isRolledBack(), "server connections 3x the baseline's RTT p95");
        assertTrue(canary.getRollbackEvidence().startsWith("netty canary:reno worse than default:bbr on "),
                canary.getRollbackEvidence());
        assertSame(config.netty().defaultArm(), Guard.redirect("netty", config, canaryArm));
        assertSame(canaryArm, Guard.redirect("kwik", config, canaryArm), "kwik's arms of the same name are apart");
    }

    /**
     * What a close costs Netty's event loop with guard on (the channel's closeFuture listener calls
     * {@link ConnectionMeter#close}: the close summary and the guard's record): 1,000 server closes of a
     * 50% canary, timed one by one, with the guard judging on its own (this) thread once a second of
     * the closes' clock. Before, each close copied and sorted the window on the closing thread
     * (0.26-0.8 ms per close at 1,000 connections in the window).
     */
    @Test
    void aNettyCloseWithGuardOnCostsMicrosecondsAndNoTestRunsOnTheClosingThread() {
        config("netty.cc=bbr;netty.canary=reno:50%;guard=on");
        int n = 1_000;
        ConnectionMeter[] meters = new ConnectionMeter[n];
        long t = 1_000_000_000L;
        for (int i = 0; i < n; i++) {
            meters[i] = meter("server", i % 2 == 0 ? "default" : "canary", i % 2 == 0 ? "bbr" : "reno", t,
                    50_000_000L + 10_000L * i);
        }
        long[] took = new long[n];
        for (int round = 0; round < 2; round++) { // the first round warms up; the second is measured
            for (int i = 0; i < n; i++) {
                if (round == 0) {
                    meter("server", "default", "bbr", t, 50_000_000L).close();
                    continue;
                }
                long start = System.nanoTime();
                meters[i].close();
                took[i] = System.nanoTime() - start;
                if (i % 100 == 99) {
                    Guard.evaluate(System.nanoTime()); // the agent's thread, not timed
                }
            }
        }
        long[] sorted = took.clone();
        java.util.Arrays.sort(sorted);
        double mean = java.util.Arrays.stream(took).average().orElse(0);
        System.out.printf(java.util.Locale.ROOT, "[guard] netty close with guard on, %d closes: median %.1f us, mean %.1f us,"
                + " p99 %.1f us, max %.1f us%n", n, sorted[n / 2] / 1e3, mean / 1e3, sorted[n * 99 / 100] / 1e3, sorted[n - 1] / 1e3);
        ArmStats canary = ArmStats.find("netty", "canary", "reno");
        assertTrue(canary.judge != null && canary.judge.pairs >= 400, "the guard judged them: "
                + (canary.judge == null ? "no judge" : canary.judge.pairs + " pairs"));
        // a loaded 2-core machine preempts now and then: the median and the mean carry the claim
        // median 1.0-10.8 us in 16 runs (13 gate, 2 acceptance, 1 full; 2026-12-04) against 50 us: it fails only if more
        // than half the closes take 4.6x the worst median seen, which preemption (one close at most 4.1 ms) does not do
        assertTrue(sorted[n / 2] < 50_000, "median " + sorted[n / 2] + " ns");
        // mean 1.5-14.5 us in the same 16 runs against 200 us: fails only on about 185 ms of stalls inside the timed
        // closes (the most seen was about 14 ms in all); both bounds well under 1 in 10,000 a run
        assertTrue(mean < 200_000, "mean " + mean + " ns");
    }

    /** A closed-to-be Netty connection of one arm: 20 packets, no loss, every ACK at {@code rtt}. */
    private static ConnectionMeter meter(String role, String label, String algorithm, long t, long rtt) {
        ConnectionMeter m = new ConnectionMeter("netty", new ConnectionMeter.Owner() {
            @Override public String connectionId() { return "0" + rtt; }
            @Override public String role() { return role; }
            @Override public String algorithm() { return algorithm; }
            @Override public String controller() { return "ccagent"; }
            @Override public ConnectionMeter.SlowStart controllerSlowStart() { return ConnectionMeter.SlowStart.UNKNOWN; }
        });
        m.bind("netty", label, algorithm);
        for (int pn = 0; pn < 20; pn++) {
            m.sent(t + pn, 1200);
        }
        m.ackFrame(t + rtt + 20, 19, 0);
        for (int pn = 0; pn < 20; pn++) {
            m.acked(pn, t + pn, 1200);
        }
        m.ackDone(t + rtt + 20);
        return m;
    }
}
