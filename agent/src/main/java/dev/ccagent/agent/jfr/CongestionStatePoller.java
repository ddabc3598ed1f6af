package dev.ccagent.agent.jfr;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.connection.LiveConnection;
import dev.ccagent.agent.connection.LiveConnections;
import dev.ccagent.agent.connection.SendTelemetry;
import dev.ccagent.agent.runtime.AgentRuntime;
import dev.ccagent.cc.CcSnapshot;
import dev.ccagent.jfr.CongestionState;
import dev.ccagent.jfr.JfrSwitch;

import java.util.Arrays;

/**
 * The periodic CongestionState: a {@link jdk.jfr.FlightRecorder#addPeriodicEvent} hook, so JFR calls
 * it at the recording's period (1 s in ccagent.jfc) and only while a recording wants the event.
 * Registered when Flight Recorder initialises, never earlier (a JVM that never records never starts JFR).
 *
 * <p>The recording budget: a period writes one event for each active connection (activity since its last
 * periodic event), but at most {@code jfr.state-connections} ({@link AgentConfig#stateConnections()}).
 * Beyond as many active connections it writes a rotating sample: connections are taken in rounds, each
 * active connection once a round, a period continuing the round where the last one stopped, so a steady
 * set of A active connections under a budget of N has each written once in every ceil(A/N) periods. Each
 * event's {@code weight} is the period's active connections divided by the events written for them (1
 * when all were written). Nothing is allocated a connection: the registry is copied into an array the
 * poller keeps (and clears after each period, holding no closed connection).
 */
public final class CongestionStatePoller implements Runnable {

    private static volatile boolean registered;
    private final CcSnapshot scratch = new CcSnapshot();
    /** The registry's connections this period (null after them and after the period). */
    private LiveConnection[] live = new LiveConnection[64];
    /** The active ones among them, in registry order (null after the period). */
    private LiveConnection[] active = new LiveConnection[64];
    /** The current round: a connection whose {@code polledRound} is below it is owed an event. */
    private long round = 1;
    private long period;

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
        try {
            AgentConfig config = AgentRuntime.config();
            poll(config != null ? config.stateConnections() : AgentConfig.DEFAULT_STATE_CONNECTIONS);
        } catch (Throwable ignored) {
            // the events of one period are lost; the next period tries again
        } finally {
            Arrays.fill(live, null);
            Arrays.fill(active, null);
        }
    }

    /** One period under a budget of {@code cap} events (package-private for tests). */
    synchronized void poll(int cap) {
        live = LiveConnections.copyInto(live);
        if (active.length < live.length) {
            active = new LiveConnection[live.length];
        }
        int activeCount = 0;
        for (int i = 0; i < live.length && live[i] != null; i++) {
            try {
                SendTelemetry t = live[i].telemetry();
                if (t.datagramsSent + t.packetsReceived != t.polledActivity) {
                    active[activeCount++] = live[i];
                } // else idle or closed since its last event: nothing new to say
            } catch (Throwable ignored) {
                // one broken connection must not stop the others' events
            }
        }
        if (activeCount == 0) {
            return;
        }
        int budget = Math.min(activeCount, Math.max(1, cap));
        double weight = (double) activeCount / budget;
        period++;
        int written = 0;
        for (int pass = 0; pass < 2 && written < budget; pass++) {
            for (int i = 0; i < activeCount && written < budget; i++) {
                SendTelemetry t = active[i].telemetry();
                if (t.polledRound >= round || t.polledPeriod == period) {
                    continue; // written this round, or (as a new round begins) this period
                }
                t.polledRound = round;
                t.polledPeriod = period;
                written++;
                write(active[i], t, weight);
            }
            if (written < budget) {
                round++; // every active connection had its event this round: the next round begins
            }
        }
    }

    private void write(LiveConnection a, SendTelemetry t, double weight) {
        try {
            t.polledActivity = t.datagramsSent + t.packetsReceived;
            CcSnapshot s = a.snapshot(scratch); // scratch is this poller's: poll holds its lock
            String algorithm = s != null ? s.algorithm : a.algorithm();
            long cwnd = s != null ? s.congestionWindow : a.getWindowSize();
            long inFlight = s != null ? s.bytesInFlight : a.getBytesInFlight();
            CcJfr.congestionState(t, algorithm, a.arm(), s, cwnd, inFlight, "periodic", weight);
        } catch (Throwable ignored) {
            // one broken connection must not stop the others' events
        }
    }
}
