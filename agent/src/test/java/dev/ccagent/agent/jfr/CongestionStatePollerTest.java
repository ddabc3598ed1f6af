package dev.ccagent.agent.jfr;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.connection.LiveConnection;
import dev.ccagent.agent.connection.LiveConnections;
import dev.ccagent.agent.connection.SendTelemetry;
import dev.ccagent.cc.CcSnapshot;
import dev.ccagent.jfr.EventFields;
import dev.ccagent.jfr.EventNames;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The recording budget, read back with the JDK's parser: synthetic connections in the registry, one
 * {@link CongestionStatePoller#poll} a period, each event's period taken from the window the connection
 * reports (its "Congestion Window" is the period number).
 */
class CongestionStatePollerTest {

    /** The period the connections report as their window. */
    private static long currentPeriod;

    /** A stock-controller connection whose activity the test moves. */
    private static final class Synthetic implements LiveConnection {
        final SendTelemetry telemetry = new SendTelemetry("synthetic", true);

        Synthetic(int index) {
            telemetry.setConnectionId("c" + index);
        }

        @Override public SendTelemetry telemetry() {
            return telemetry;
        }

        @Override public String algorithm() {
            return AgentConfig.STOCK;
        }

        @Override public AgentConfig.Arm arm() {
            return null;
        }

        @Override public CcSnapshot snapshot(CcSnapshot into) {
            return null;
        }

        @Override public long getWindowSize() {
            return currentPeriod;
        }

        @Override public long getBytesInFlight() {
            return 0;
        }

        @Override public boolean switchToStock() {
            return false;
        }
    }

    private final List<Synthetic> connections = new ArrayList<>();

    @AfterEach
    void forget() {
        connections.forEach(LiveConnections::closed);
    }

    /** Per period, the connection ids written and their weights, from the recording of {@code periods} polls. */
    private Map<Long, Map<String, Double>> record(Path dir, int count, int cap, int periods, int activeEvery)
            throws Exception {
        LiveConnections.detachAll(); // whatever another test left
        for (int i = 0; i < count; i++) {
            Synthetic c = new Synthetic(i);
            connections.add(c);
            LiveConnections.register(c);
        }
        CongestionStatePoller poller = new CongestionStatePoller();
        Path file = dir.resolve("state.jfr");
        dev.ccagent.jfr.JfrSwitch.install();
        try (Recording rec = new Recording()) {
            // the registered poller (if another test started one) must not run: an hour's period
            rec.enable(EventNames.CONGESTION_STATE).withPeriod(Duration.ofHours(1));
            rec.start();
            dev.ccagent.jfr.JfrSwitch.refresh();
            for (int p = 1; p <= periods; p++) {
                currentPeriod = p;
                for (int i = 0; i < count; i += activeEvery) {
                    connections.get(i).telemetry.datagramsSent++;
                }
                poller.poll(cap);
            }
            rec.stop();
            rec.dump(file);
        }
        Map<Long, Map<String, Double>> byPeriod = new TreeMap<>();
        for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
            if (e.getEventType().getName().equals(EventNames.CONGESTION_STATE)
                    && "synthetic".equals(e.getString(EventFields.LIBRARY))) {
                Double before = byPeriod.computeIfAbsent(e.getLong(EventFields.CONGESTION_WINDOW), k -> new HashMap<>())
                        .put(e.getString(EventFields.CONNECTION_ID), e.getDouble(EventFields.WEIGHT));
                assertEquals(null, before, "a connection written twice in one period");
            }
        }
        return byPeriod;
    }

    @Test
    void aThousandActiveConnectionsUnderABudgetOfAHundredAreEachWrittenOnceInTenPeriods(@TempDir Path dir)
            throws Exception {
        Map<Long, Map<String, Double>> byPeriod = record(dir, 1000, 100, 10, 1);
        assertEquals(10, byPeriod.size(), "every period wrote events");
        Map<String, Integer> times = new HashMap<>();
        byPeriod.forEach((period, written) -> {
            assertEquals(100, written.size(), "period " + period + ": the budget, all of it");
            written.values().forEach(w -> assertEquals(10.0, w, 1e-12, "1,000 active / 100 events"));
            written.keySet().forEach(id -> times.merge(id, 1, Integer::sum));
        });
        assertEquals(1000, times.size(), "every connection written");
        assertTrue(times.values().stream().allMatch(n -> n == 1), "each once in the 10 periods");
    }

    @Test
    void withinTheBudgetEveryActiveConnectionIsWrittenEachPeriodWithWeightOne(@TempDir Path dir) throws Exception {
        Map<Long, Map<String, Double>> byPeriod = record(dir, 100, 100, 4, 2); // 50 of the 100 active
        assertEquals(4, byPeriod.size());
        byPeriod.forEach((period, written) -> {
            written.values().forEach(w -> assertEquals(1.0, w, 0));
            if (period == 1) {
                assertEquals(100, written.size(), "period 1: every connection's first event");
                return;
            }
            assertEquals(50, written.size(), "period " + period + ": the active ones, no idle one");
            written.keySet().forEach(id ->
                    assertEquals(0, Integer.parseInt(id.substring(1)) % 2, "an idle connection was written: " + id));
        });
    }

    @Test
    void anUnevenShareStillReachesEveryConnectionWithinCeilOfActiveOverBudgetPeriods(@TempDir Path dir)
            throws Exception {
        Map<Long, Map<String, Double>> byPeriod = record(dir, 250, 100, 9, 1);
        Map<String, List<Long>> periodsOf = new HashMap<>();
        byPeriod.forEach((period, written) -> {
            assertEquals(100, written.size(), "period " + period);
            written.values().forEach(w -> assertEquals(2.5, w, 1e-12));
            written.keySet().forEach(id -> periodsOf.computeIfAbsent(id, k -> new ArrayList<>()).add(period));
        });
        assertEquals(250, periodsOf.size());
        periodsOf.forEach((id, periods) -> {
            long previous = 0; // before period 1
            for (long p : periods) {
                assertTrue(p - previous <= 3, id + " waited " + (p - previous) + " periods (ceil(250/100) = 3): " + periods);
                previous = p;
            }
            assertTrue(9 - previous < 3, id + " not written in the last 3 periods: " + periods);
        });
    }
}
