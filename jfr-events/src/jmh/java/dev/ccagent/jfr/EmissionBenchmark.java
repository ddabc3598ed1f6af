package dev.ccagent.jfr;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * Cost of the hot-path emission pattern ({@code if (JfrSwitch.on) { e = new ...; if (e.shouldCommit())
 * {fill; commit} }}) with no recording, with a recording that disables the event, and with one that
 * records it; against an empty baseline.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class EmissionBenchmark {

    @Param({"off", "event-disabled", "recording"})
    public String recording;

    private jdk.jfr.Recording r;
    private long counter;

    @Setup(Level.Trial)
    public void setUp() {
        JfrSwitch.install();
        if (!recording.equals("off")) {
            r = new jdk.jfr.Recording();
            if (recording.equals("recording")) {
                r.enable(PacingStall.class);
            } else {
                r.disable(PacingStall.class);
                r.enable("jdk.CPULoad");
            }
            r.setToDisk(true);
            r.start();
        }
        JfrSwitch.refresh();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (r != null) {
            r.close();
        }
    }

    @Benchmark
    public long baseline() {
        return ++counter;
    }

    @Benchmark
    public long emitPacingStall() {
        long c = ++counter;
        if (JfrSwitch.on) {
            PacingStall e = new PacingStall();
            if (e.shouldCommit()) {
                e.library = "kwik";
                e.connectionId = "0123456789abcdef";
                e.algorithm = "cubic";
                e.waitTime = c;
                e.expectedWait = 1000;
                e.pacingRate = 12_500_000;
                e.commit();
            }
        }
        return c;
    }
}
