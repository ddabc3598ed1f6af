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
            // deterministic: Random(3), the same samples every run: odds 0
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
    void guardKeysAreValidated() {
        AgentArgs.Result ok = AgentArgs.parse("canary=bbr1:10%;guard=on;guard.min-connections=8;guard.window=30s;"
                + "guard.loss-ratio=3;guard.rtt-p95-increase=25%;guard.p-value=0.05;guard.spin=off;summary.period=5s;"
                + "guard.goodput-decrease=15%;guard.spin-connections=5");
        assertTrue(ok.ok(), ok.problems().toString());
        CanaryConfig c = ok.config().canary();
        assertTrue(c.guard());
        assertEquals(8, c.minConnections());
        assertEquals(30_000_000_000L, c.windowNanos());
        assertEquals(3.0, c.lossRatio());
        assertEquals(0.25, c.rttP95Increase(), 1e-12);
        assertEquals(0.05, c.alpha(), "guard.p-value is the former name of guard.alpha");
        assertEquals(0.15, c.goodputDecrease(), 1e-12);
        assertEquals(5, c.spinConnections());
        assertFalse(c.spin());
        assertEquals(5_000_000_000L, c.summaryPeriodNanos());
        CanaryConfig d = AgentArgs.parse("").config().canary();
        assertFalse(d.guard());
        assertTrue(d.measure());
        assertEquals(20, d.minConnections());
        assertEquals(0.01, d.alpha());
        assertEquals(0.1, d.rttP95Increase(), 1e-12);
        assertEquals(0.1, d.goodputDecrease(), 1e-12);
        assertEquals(3, d.spinConnections());

        AgentArgs.Result bad = AgentArgs.parse("guard=maybe;guard.min-connections=2;guard.window=1s;guard.loss-ratio=0.5;"
                + "guard.rtt-p95-increase=x;summary.period=0s");
        assertFalse(bad.ok());
        assertEquals(6, bad.problems().size(), bad.problems().toString());
        assertTrue(bad.problems().get(0).startsWith("guard=maybe"), bad.problems().toString());

        // bounds that agree: no minimum above the pairs the guard keeps; alpha a probability worth the name
        AgentArgs.Result above = AgentArgs.parse("guard=on;guard.min-connections=2049;guard.alpha=0.5;"
                + "guard.goodput-decrease=100%;guard.spin-connections=65");
        assertEquals(4, above.problems().size(), above.problems().toString());
        assertTrue(above.problems().get(0).startsWith("guard.min-connections=2049: 2049 is outside 5..2048"),
                above.problems().toString());
        assertTrue(above.problems().get(1).startsWith("guard.alpha=0.5: in (0, 0.2]"), above.problems().toString());
        assertTrue(AgentArgs.parse("guard.min-connections=2048").ok());
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
