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

    @Test
    void lossyCanaryIsRolledBackAndSetReEnablesIt() throws Exception {
        AgentConfig config = config("cc=stock;canary=cubic:50%;guard=on;guard.min-connections=6;guard.window=60s");
        ArmStats base = ArmStats.of("kwik", "default", "stock");
        ArmStats canary = ArmStats.of("kwik", "canary", "cubic");
        long now = System.nanoTime();
        for (int i = 0; i < 6; i++) {
            Guard.onClosed(base, 1_000_000, 1_000 * i, 800, 50_000_000L + i, now);
            assertFalse(canary.isRolledBack(), "judged before the canary has min-connections");
            Guard.onClosed(canary, 1_000_000, 100_000 + 1_000 * i, 800, 50_000_000L + i, now);
        }
        assertTrue(canary.isRolledBack(), "rolled back");
        assertFalse(base.isRolledBack(), "the baseline is never rolled back");
        assertTrue(canary.getRollbackEvidence().contains("loss ratio") && canary.getRollbackEvidence().contains("Mann-Whitney"),
                canary.getRollbackEvidence());
        AgentConfig.Arm canaryArm = config.canaryArms().get(0);
        assertSame(config.defaultArm(), Guard.redirect("kwik", config, canaryArm), "new connections go to the default arm");
        assertSame(config.defaultArm(), Guard.redirect("kwik", config, config.defaultArm()));
        // the MXBean shows it
        Object rolled = ManagementFactory.getPlatformMBeanServer().getAttribute(
                new ObjectName("dev.ccagent:type=Arm,library=kwik,arm=canary,algorithm=cubic"), "RolledBack");
        assertEquals(Boolean.TRUE, rolled);
        Guard.reEnableAll("set");
        assertFalse(canary.isRolledBack());
        assertSame(canaryArm, Guard.redirect("kwik", config, canaryArm));
    }

    @Test
    void equalArmsAndSlowerRttBelowThresholdAreNotRolledBack() {
        config("cc=stock;canary=bbr3:50%;guard=on;guard.min-connections=6;guard.rtt-p95-increase=50%");
        ArmStats base = ArmStats.of("kwik", "default", "stock");
        ArmStats canary = ArmStats.of("kwik", "canary", "bbr3");
        long now = System.nanoTime();
        for (int i = 0; i < 20; i++) {
            Guard.onClosed(base, 1_000_000, 10_000 + 100 * i, 800, 50_000_000L + 1_000_000L * i, now);
            // same loss, RTT p95 30% higher: below the 50% threshold
            Guard.onClosed(canary, 1_000_000, 10_000 + 100 * i, 800, 65_000_000L + 1_300_000L * i, now);
        }
        assertFalse(canary.isRolledBack(), canary.getRollbackEvidence());
        // RTT p95 twice the baseline's: rolled back on RTT
        for (int i = 0; i < 20; i++) {
            Guard.onClosed(canary, 1_000_000, 10_000 + 100 * i, 800, 150_000_000L + 1_000_000L * i, now);
        }
        assertTrue(canary.isRolledBack());
        assertTrue(canary.getRollbackEvidence().contains("rtt p95"), canary.getRollbackEvidence());
    }

    @Test
    void spinAlarmRollsBackAndControlShowsAndReEnablesIt() throws Exception {
        config("cc=stock;canary=bbr1:50%;guard=on");
        dev.ccagent.agent.control.Control.register(() -> AgentRuntime.setConfig(null),
                (c, how) -> AgentRuntime.setConfig(c));
        ArmStats.of("kwik", "default", "stock");
        ArmStats canary = ArmStats.of("kwik", "canary", "bbr1");
        canary.alarm("send-loop spin");
        assertTrue(canary.isRolledBack());
        assertTrue(canary.getRollbackEvidence().contains("spin alarm"), canary.getRollbackEvidence());
        javax.management.MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        ObjectName control = new ObjectName(dev.ccagent.agent.control.Control.OBJECT_NAME);
        String[] arms = (String[]) server.getAttribute(control, "Arms");
        assertTrue(java.util.Arrays.stream(arms).anyMatch(l -> l.startsWith("kwik canary:bbr1") && l.contains("ROLLED BACK")),
                java.util.Arrays.toString(arms));
        // an unrelated change keeps the rollback; a canary decision re-enables the arm
        server.invoke(control, "set", new Object[] {"log=info"}, new String[] {String.class.getName()});
        assertTrue(canary.isRolledBack());
        server.invoke(control, "set", new Object[] {"canary=bbr1:50%"}, new String[] {String.class.getName()});
        assertFalse(canary.isRolledBack());
    }

    @Test
    void guardOffOnlyCounts() {
        config("cc=stock;canary=newreno:50%;guard.min-connections=5");
        ArmStats base = ArmStats.of("kwik", "default", "stock");
        ArmStats canary = ArmStats.of("kwik", "canary", "newreno");
        long now = System.nanoTime();
        for (int i = 0; i < 10; i++) {
            Guard.onClosed(base, 1_000_000, 0, 800, 50_000_000L, now);
            Guard.onClosed(canary, 1_000_000, 500_000, 800, 500_000_000L, now);
        }
        assertFalse(canary.isRolledBack(), "guard is off by default");
        canary.alarm("send-loop spin");
        assertFalse(canary.isRolledBack());
        assertEquals(1, canary.getAlarms());
    }

    /** Netty QUIC's split: canary arms against netty.cc; only server connections are judged. */
    @Test
    void nettyCanaryIsJudgedAgainstNettyCcAndClientConnectionsAreNot() {
        AgentConfig config = config("netty.cc=bbr;netty.canary=reno:50%;guard=on;guard.min-connections=6;guard.window=60s");
        AgentConfig.Arm canaryArm = config.netty().canaryArms().get(0);
        ConnectionMeter[] clients = new ConnectionMeter[12];
        long t = 1_000_000_000L;
        for (int i = 0; i < 12; i++) {
            // client connections of the canary arm with terrible figures: measured, never judged
            clients[i] = meter("client", "canary", "reno", t, 200_000_000L);
            clients[i].close();
        }
        ArmStats canary = ArmStats.find("netty", "canary", "reno");
        assertEquals(12, canary.getClosedConnections(), "client connections are measured");
        for (int i = 0; i < 6; i++) {
            meter("server", "default", "bbr", t, 50_000_000L + 1_000_000L * i).close();
        }
        assertFalse(canary.isRolledBack(), "judged on client connections");
        for (int i = 0; i < 6; i++) {
            meter("server", "canary", "reno", t, 150_000_000L + 1_000_000L * i).close();
        }
        assertTrue(canary.isRolledBack(), "server connections 3x the baseline's RTT p95");
        assertTrue(canary.getRollbackEvidence().startsWith("netty canary:reno worse than default:bbr on rtt p95 increase"),
                canary.getRollbackEvidence());
        assertSame(config.netty().defaultArm(), Guard.redirect("netty", config, canaryArm));
        assertSame(canaryArm, Guard.redirect("kwik", config, canaryArm), "kwik's arms of the same name are apart");
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
