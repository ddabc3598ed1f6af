package dev.ccagent.agent.jfr;

import dev.ccagent.agent.log.AgentLog;
import dev.ccagent.jfr.CcEvents;

import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The agent's own recording ({@code jfr=path.jfr}): ccagent.jfc settings, bounded by
 * {@code jfr.max-size} and {@code jfr.max-age}, kept on disk and written to the path when the JVM
 * exits (JFR's own shutdown hook dumps it: {@code dumpOnExit} with the destination set), or when the
 * agent detaches. Fail open: a recording that cannot start is logged and the agent carries on.
 */
public final class AgentRecording {

    private static jdk.jfr.Recording recording;
    private static Path destination;

    private AgentRecording() {
    }

    public static synchronized boolean start(Path file, long maxSizeBytes, long maxAgeNanos) {
        if (recording != null) {
            AgentLog.info("JFR recording to " + destination + " already running; jfr=" + file + " ignored");
            return false;
        }
        try {
            Path abs = file.toAbsolutePath();
            if (abs.getParent() != null) {
                Files.createDirectories(abs.getParent());
            }
            jdk.jfr.Configuration c = jdk.jfr.Configuration.create(new StringReader(CcEvents.settingsText()));
            jdk.jfr.Recording r = new jdk.jfr.Recording(c);
            r.setName("ccagent");
            r.setToDisk(true);
            r.setMaxSize(maxSizeBytes);
            r.setMaxAge(Duration.ofNanos(maxAgeNanos));
            r.setDestination(abs);
            r.setDumpOnExit(true);
            r.start();
            recording = r;
            destination = abs;
            AgentLog.info("JFR recording started with ccagent.jfc; written to " + abs + " at exit (max "
                    + (maxSizeBytes >> 20) + " MiB, " + Duration.ofNanos(maxAgeNanos) + ")");
            return true;
        } catch (Throwable t) {
            AgentLog.error("JFR recording to " + file + " could not start; continuing without it", t);
            return false;
        }
    }

    /** Stops the recording, writing it to its destination (detach). */
    public static synchronized void stop() {
        jdk.jfr.Recording r = recording;
        recording = null;
        if (r == null) {
            return;
        }
        try {
            if (r.getState() == jdk.jfr.RecordingState.RUNNING) {
                r.stop(); // writes to the destination
            }
            AgentLog.info("JFR recording written to " + destination);
        } catch (Throwable t) {
            AgentLog.warn("JFR recording could not be stopped cleanly: " + t);
        } finally {
            try {
                r.close();
            } catch (Throwable ignored) {
                // already closed by JFR's shutdown
            }
        }
    }

    public static synchronized Path destination() {
        return recording != null ? destination : null;
    }
}
