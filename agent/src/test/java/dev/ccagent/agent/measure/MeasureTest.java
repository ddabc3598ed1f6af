package dev.ccagent.agent.measure;

import dev.ccagent.agent.config.AgentArgs;
import dev.ccagent.agent.config.CanaryConfig;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MeasureTest {

    @Test
    void histogramPercentilesWithinFourPercent() {
        Random r = new Random(3);
        RttHistogram h = new RttHistogram();
        long[] samples = new long[20_001];
        for (int i = 0; i < samples.length; i++) {
            samples[i] = 1_000_000L + (long) (r.nextDouble() * 400_000_000L); // 1..401 ms
            h.record(samples[i]);
        }
        java.util.Arrays.sort(samples);
        for (double q : new double[] {0.5, 0.95, 0.99}) {
            long exact = samples[(int) Math.ceil(q * samples.length) - 1];
            long got = h.percentile(q);
            assertTrue(Math.abs(got - exact) <= 0.04 * exact, q + ": " + got + " vs " + exact);
        }
        assertEquals(0, new RttHistogram().percentile(0.5));
        // every bucket's midpoint lies within 3.2% of every value in it
        for (long v = 1024; v < (1L << 39); v += v / 7 + 1) {
            long mid = RttHistogram.value(RttHistogram.bucket(v));
            assertTrue(Math.abs(mid - v) <= 0.032 * v, v + " -> " + mid);
        }
    }

    @Test
    void mannWhitneyAgreesWithTheTextbook() {
        // clearly separated samples of 10 each: exact one-sided p is 1/C(20,10) ~ 5.4e-6; the normal
        // approximation gives about 9e-5
        double[] a = {11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
        double[] b = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
        assertTrue(Guard.mannWhitneyGreater(a, b) < 1e-3);
        assertTrue(Guard.mannWhitneyGreater(b, a) > 0.99);
        // identical distributions: no evidence
        double[] c = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
        double p = Guard.mannWhitneyGreater(c, b);
        assertTrue(p > 0.4 && p < 0.6, "p=" + p);
        // all ties
        assertEquals(1.0, Guard.mannWhitneyGreater(new double[] {0, 0, 0}, new double[] {0, 0, 0}));
        assertEquals(0.5, Guard.normalCdf(0), 1e-7);
        assertEquals(0.975, Guard.normalCdf(1.959964), 1e-6);
        assertEquals(3.0, Guard.median(new double[] {5, 1, 3}));
        assertEquals(2.5, Guard.median(new double[] {4, 1, 3, 2}));
    }

    @Test
    void guardKeysAreValidated() {
        AgentArgs.Result ok = AgentArgs.parse("canary=bbr1:10%;guard=on;guard.min-connections=8;guard.window=30s;"
                + "guard.loss-ratio=3;guard.rtt-p95-increase=25%;guard.p-value=0.05;guard.spin=off;summary.period=5s");
        assertTrue(ok.ok(), ok.problems().toString());
        CanaryConfig c = ok.config().canary();
        assertTrue(c.guard());
        assertEquals(8, c.minConnections());
        assertEquals(30_000_000_000L, c.windowNanos());
        assertEquals(3.0, c.lossRatio());
        assertEquals(0.25, c.rttP95Increase(), 1e-12);
        assertEquals(0.05, c.pValue());
        assertFalse(c.spin());
        assertEquals(5_000_000_000L, c.summaryPeriodNanos());
        CanaryConfig d = AgentArgs.parse("").config().canary();
        assertFalse(d.guard());
        assertTrue(d.measure());
        assertEquals(20, d.minConnections());

        AgentArgs.Result bad = AgentArgs.parse("guard=maybe;guard.min-connections=2;guard.window=1s;guard.loss-ratio=0.5;"
                + "guard.rtt-p95-increase=x;summary.period=0s");
        assertFalse(bad.ok());
        assertEquals(6, bad.problems().size(), bad.problems().toString());
        assertTrue(bad.problems().get(0).startsWith("guard=maybe"), bad.problems().toString());
    }

    @Test
    void meterCountsEveryPacketOnceAndFeedsItsArm() {
        ConnectionMeter.Owner owner = new ConnectionMeter.Owner() {
            @Override public String connectionId() { return "00"; }
            @Override public String role() { return "server"; }
            @Override public String algorithm() { return "stock"; }
            @Override public String controller() { return "stock"; }
            @Override public ConnectionMeter.SlowStart controllerSlowStart() { return ConnectionMeter.SlowStart.UNKNOWN; }
        };
        ConnectionMeter m = new ConnectionMeter("unit", owner);
        long t = 1_000_000_000L;
        m.sent(t, 1200); // before the arm is known (a client)
        m.bind("unit", "default", "meter-test");
        ArmStats arm = ArmStats.find("unit", "default", "meter-test");
        for (int pn = 1; pn < 10; pn++) {
            m.sent(t + pn, 1200);
        }
        m.ackFrame(t + 50_000_000L, 5, 0);
        for (int pn = 0; pn <= 5; pn++) {
            m.acked(pn, t + pn, 1200);
        }
        m.ackDone(t + 50_000_000L);
        m.lost(1200);
        m.ackFrame(t + 60_000_000L, 9, 2_000_000L);
        for (int pn = 7; pn <= 9; pn++) {
            m.acked(pn, t + pn, 1200);
        }
        m.ackDone(t + 60_000_000L); // nothing in flight from here: application-limited
        assertEquals(12_000, arm.getBytesSent());
        assertEquals(10, arm.getPacketsSent());
        assertEquals(9 * 1200, arm.getBytesAcked());
        assertEquals(1200, arm.getBytesLost());
        assertEquals(1, arm.getPacketsLost());
        assertEquals(1, arm.getOpenConnections());
        double p50 = arm.getRttP50Millis();
        assertTrue(p50 > 48 && p50 < 62, "p50 " + p50);
        m.close();
        m.close(); // idempotent
        assertEquals(0, arm.getOpenConnections());
        assertEquals(1, arm.getClosedConnections());
        assertEquals(1, arm.getLeftSlowStartConnections()); // a loss was declared
        m.sent(t + 70_000_000L, 1200); // after close: not counted
        assertEquals(12_000, arm.getBytesSent());
    }

    /** "Left slow start": a controller's own mode decides (a BBR keeps STARTUP through loss); a loss only without one. */
    @Test
    void leftSlowStartIsTheControllersOwnModeAndALossOnlyWhereNoneIsReported() {
        ConnectionMeter.SlowStart[] states = ConnectionMeter.SlowStart.values();
        boolean[] lossy = {true, false};
        for (ConnectionMeter.SlowStart state : states) {
            for (boolean loss : lossy) {
                String armLabel = "slow-start-" + state + "-" + loss;
                ConnectionMeter.Owner owner = new ConnectionMeter.Owner() {
                    @Override public String connectionId() { return "01"; }
                    @Override public String role() { return "server"; }
                    @Override public String algorithm() { return "bbr1"; }
                    @Override public String controller() { return "ccagent"; }
                    @Override public ConnectionMeter.SlowStart controllerSlowStart() { return state; }
                };
                ConnectionMeter m = new ConnectionMeter("unit", owner);
                m.bind("unit", "canary", armLabel);
                long t = 1_000_000_000L;
                m.sent(t, 1200);
                m.sent(t + 1, 1200);
                m.ackFrame(t + 50_000_000L, 1, 0);
                m.acked(1, t + 1, 1200);
                m.ackDone(t + 50_000_000L);
                if (loss) {
                    m.lost(1200);
                }
                m.close();
                boolean expected = state == ConnectionMeter.SlowStart.LEFT
                        || (state == ConnectionMeter.SlowStart.UNKNOWN && loss);
                assertEquals(expected ? 1 : 0, ArmStats.find("unit", "canary", armLabel).getLeftSlowStartConnections(),
                        state + ", loss " + loss);
            }
        }
    }
}
