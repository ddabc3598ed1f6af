package dev.ccagent.agent.detect;

import dev.ccagent.agent.AgentBenchmark;
import dev.ccagent.agent.connection.SendTelemetry;
import dev.ccagent.agent.config.AgentArgs;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * What the spin detector's close hook costs the thread that closes a connection (kwik's
 * {@code SenderImpl.stop()}, Netty's close listener): two per-thread allocation counters read and the
 * connection handed to the detector's queue. The detector runs (its own thread drains the queue once a
 * window), as in a server; the same two live threads stand for the connection's sender and receiver.
 */
@State(Scope.Thread)
public class SpinDetectorCloseBenchmark extends AgentBenchmark {

    private final SendTelemetry telemetry = new SendTelemetry("bench", true);
    private Thread receiver;

    @Setup(Level.Trial)
    public void start() throws InterruptedException {
        SpinDetector.apply(AgentArgs.parse("detect=on").config());
        receiver = new Thread(() -> {
            try {
                Thread.sleep(Long.MAX_VALUE);
            } catch (InterruptedException e) {
                // done
            }
        }, "bench-receiver");
        receiver.setDaemon(true);
        receiver.start();
        telemetry.loopEnter(); // this thread is the sender
        Thread.sleep(10);
        telemetry.receiverThreadId = receiver.getId();
    }

    @TearDown(Level.Trial)
    public void stop() {
        SpinDetector.stop();
        receiver.interrupt();
    }

    @Benchmark
    public void close() {
        telemetry.closedAt = 0; // the same connection closes again (one volatile write; the detector evaluates it once)
        SpinDetector.connectionClosed(telemetry, "bench");
    }
}
