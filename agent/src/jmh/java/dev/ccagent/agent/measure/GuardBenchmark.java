package dev.ccagent.agent.measure;

import dev.ccagent.agent.AgentBenchmark;
import dev.ccagent.agent.config.AgentArgs;
import dev.ccagent.agent.runtime.AgentRuntime;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * What a connection close costs the library's closing thread with {@code guard=on} (kwik's sender or
 * Netty's event loop): {@link Guard#onClosed}, the guard's whole share of a close: one O(1) write into
 * the arm's fixed ring. Expected 0 B/op under {@code -prof gc}. {@code evaluate} is the agent thread's
 * once-a-second work for 100 new closes per arm (pairing and three mixture tests), for scale; it never
 * runs on a library's thread.
 */
@State(Scope.Thread)
public class GuardBenchmark extends AgentBenchmark {

    ArmStats base;
    ArmStats canary;
    long now = 1_000_000_000_000L;
    long rtt = 50_000_000L;
    long closes;

    @Setup
    public void setUp() {
        AgentRuntime.setConfig(AgentArgs.parse("cc=cubic;canary=bbr3:50%;guard=on").config());
        base = ArmStats.of("kwik", "default", "cubic");
        canary = ArmStats.of("kwik", "canary", "bbr3");
    }

    /** One close of a server connection: the only guard work on the closing thread. */
    @Benchmark
    public void recordClose() {
        now += 10_000_000L;
        rtt = 40_000_000L + (rtt * 7919 + 13) % 20_000_000L;
        Guard.onClosed((closes++ & 1) == 0 ? base : canary, 1_000_000, 1_000, 800, rtt, 1_000_000, 500_000_000L, now);
    }

    /** 100 closes per arm, then the agent thread's evaluation of them (per op: all of it; minus 200 × recordClose). */
    @Benchmark
    public void evaluate100ClosesPerArm() {
        for (int i = 0; i < 200; i++) {
            recordClose();
        }
        Guard.evaluate(now);
        if (canary.isRolledBack()) {
            Guard.reEnableAll("benchmark");
        }
    }
}
