package dev.ccagent.agent.jfr;

import dev.ccagent.agent.connection.SendTelemetry;
import dev.ccagent.agent.connection.LiveConnections;
import dev.ccagent.agent.connection.LiveConnection;
import dev.ccagent.cc.CcSnapshot;
import dev.ccagent.jfr.CongestionState;
import dev.ccagent.jfr.JfrSwitch;

/**
 * The periodic CongestionState: a {@link jdk.jfr.FlightRecorder#addPeriodicEvent} hook, so JFR calls
 * it at the recording's period (1 s in ccagent.jfc) and only while a recording wants the event.
 * Registered when Flight Recorder initialises, never earlier (a JVM that never records never starts JFR).
 */
public final class CongestionStatePoller implements Runnable {

    private static volatile boolean registered;
    private final CcSnapshot scratch = new CcSnapshot();

    /** Registers the hook once Flight Recorder is up. */
    public static synchronized void register() {
        if (registered) {
            return;
        }
        registered = true;
        JfrSwitch.whenRecorderInitialized(() -> jdk.jfr.FlightRecorder.addPeriodicEvent(CongestionState.class,
                new dev.ccagent.agent.runtime.OpaqueRunnable(new CongestionStatePoller()))); // JFR's thread inlines none of it
    }

    @Override
    public void run() {
        for (LiveConnection a : LiveConnections.live()) {
            try {
                CcSnapshot s;
                dev.ccagent.agent.connection.SendTelemetry t = a.telemetry();
                long activity = t.datagramsSent + t.packetsReceived;
                if (activity == t.polledActivity) {
                    continue; // idle or closed since the last period: nothing new to say
                }
                t.polledActivity = activity;
                synchronized (scratch) {
                    s = a.snapshot(scratch);
                    String algorithm = s != null ? s.algorithm : a.algorithm();
                    long cwnd = s != null ? s.congestionWindow : a.getWindowSize();
                    long inFlight = s != null ? s.bytesInFlight : a.getBytesInFlight();
                    CcJfr.congestionState(a.telemetry(), algorithm, a.arm(), s, cwnd, inFlight, "periodic");
                }
            } catch (Throwable ignored) {
                // one broken connection must not stop the others' events
            }
        }
    }
}
