package dev.ccagent.agent.measure;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Detach closes out every measured connection that is still open (issue #24): each is counted
 * closed on its arm (the open count goes back), the live table is empty (nothing of the connections
 * is held), later calls of the library are ignored (no re-bind that would count it open again), and
 * the ticker thread stops. A meter registers only when asked (a failed swap registers nothing).
 */
class SummariesDetachTest {

    private static ConnectionMeter meter(String id) {
        return new ConnectionMeter("unit", new ConnectionMeter.Owner() {
            @Override public String connectionId() { return id; }
            @Override public String role() { return "server"; }
            @Override public String algorithm() { return "stock"; }
            @Override public String controller() { return "stock"; }
            @Override public ConnectionMeter.SlowStart controllerSlowStart() { return ConnectionMeter.SlowStart.UNKNOWN; }
        });
    }

    @AfterEach
    void stop() {
        Summaries.stop();
    }

    @Test
    void detachClosesOutEveryLiveConnection() throws Exception {
        int before = Summaries.live();
        ConnectionMeter unregistered = meter("x");
        assertEquals(before, Summaries.live(), "a meter is not held until it is registered");
        ArmStats arm = ArmStats.of("unit", "detach-test", "stock");
        long open0 = arm.open.sum();
        long closed0 = arm.closed.sum();
        ConnectionMeter[] meters = new ConnectionMeter[50];
        for (int i = 0; i < meters.length; i++) {
            meters[i] = meter(Integer.toHexString(i));
            meters[i].register();
            if (i % 2 == 0) {
                meters[i].bind("unit", "detach-test", "stock");
            }
            meters[i].sent(1_000_000_000L + i, 1200);
        }
        assertEquals(before + 50, Summaries.live());
        assertEquals(open0 + 25, arm.open.sum());
        assertTrue(threadRunning("ccagent-summary"), "the ticker runs while meters are live");

        assertEquals(before + 50, Summaries.detach(), "every live meter closed out");
        assertEquals(0, Summaries.live(), "nothing held after detach");
        assertEquals(open0, arm.open.sum(), "open count back");
        assertEquals(closed0 + 25, arm.closed.sum());
        // the library goes on calling (the connections live on): nothing binds or counts again
        for (ConnectionMeter m : meters) {
            m.bind("unit", "detach-test", "stock");
            m.sent(2_000_000_000L, 1200);
            m.close();
        }
        assertEquals(open0, arm.open.sum(), "no re-bind after detach");
        assertEquals(closed0 + 25, arm.closed.sum(), "a later close is not counted twice");
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (threadRunning("ccagent-summary") && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertTrue(!threadRunning("ccagent-summary"), "the ticker stopped at detach");
        unregistered.close();
    }

    private static boolean threadRunning(String name) {
        return Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().equals(name) && t.isAlive());
    }
}
