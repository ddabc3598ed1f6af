package dev.ccagent.report;

import dev.ccagent.jfr.EventFields;
import dev.ccagent.jfr.EventNames;
import jdk.jfr.EventType;
import jdk.jfr.consumer.RecordedEvent;

import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static dev.ccagent.report.JfrEvents.number;
import static dev.ccagent.report.JfrEvents.string;

/**
 * Decodes ccagent's events, as {@link JfrEvents} streams them, into a {@link ConnectionModel}: keeps
 * each connection's summary with the highest sequence (a summary seen again with the same sequence, the
 * same events in two files, is counted once), folds CongestionState samples, counts alarms (one per CPU
 * spin episode) and pacing stalls per connection, and collects rollbacks. One decoder over all files of
 * a report; {@link #file} before each file.
 */
final class EventDecoder {

    static final String SUMMARY = EventNames.CONNECTION_SUMMARY;
    static final String STATE = EventNames.CONGESTION_STATE;
    static final String STALL = EventNames.PACING_STALL;
    static final String ROLLED_BACK = EventNames.CANARY_ROLLED_BACK;
    static final String FALLBACK = EventNames.FALLBACK;
    static final String MODULE_VERDICT = EventNames.MODULE_VERDICT;
    static final Map<String, String> ALARMS = Map.of(EventNames.SEND_LOOP_SPIN, "SendLoopSpin",
            EventNames.ACK_ONLY_SEND_LOOP, "AckOnlySendLoop", EventNames.SEND_PATH_ALLOCATION, "SendPathAllocation",
            EventNames.CPU_SPIN, "CpuSpin");
    /** ConnectionSummary fields the report reads; a recording lacking some is reported by name. */
    static final List<String> SUMMARY_FIELDS = List.of(EventFields.AGENT_INSTANCE, EventFields.LIBRARY, EventFields.CONNECTION_ID, EventFields.CANARY_ARM,
            EventFields.ALGORITHM, EventFields.CONTROLLER, EventFields.SEQUENCE, EventFields.LIFETIME, EventFields.BYTES_SENT, EventFields.BYTES_ACKED, EventFields.BYTES_LOST, EventFields.RTT_P50,
            EventFields.RTT_P95, EventFields.APP_LIMITED_TIME, EventFields.LEFT_SLOW_START, EventFields.ROLE);
    /**
     * Optional ConnectionSummary field (newer agents): first 1-RTT packet to last acknowledgement. Goodput
     * divides by it when present and positive, else by lifetime; its absence is not reported as missing.
     */
    static final String TRANSFER_TIME = "transferTime";

    private final ConnectionModel model;
    private final Map<String, String> strings = new HashMap<>();
    /** Spin episodes counted (an episode is recorded several times while it lasts). */
    private final Set<Object> spinEpisodes = new HashSet<>();
    private FleetReport.Input in;
    /** Which of {@link #SUMMARY_FIELDS} (and {@link #TRANSFER_TIME}) each summary event type of the file has. */
    private Map<EventType, boolean[]> layouts;

    EventDecoder(ConnectionModel model) {
        this.model = model;
    }

    /** The events that follow are {@code in}'s: its counts and missing fields are noted on it. */
    void file(FleetReport.Input in) {
        this.in = in;
        this.layouts = new IdentityHashMap<>();
    }

    /** One event of the current file (any event: the file's event count includes the JDK's). */
    void accept(RecordedEvent e) {
        in.events++;
        EventType type = e.getEventType();
        String name = type.getName();
        if (!name.startsWith("dev.ccagent.")) {
            return;
        }
        in.ccagentEvents++;
        // the span judged: ccagent's events by end time, when JFR wrote them (an episode may have begun before
        // the recording; the JDK's jdk.ActiveRecording ends at its recorder's first start plus its duration)
        java.time.Instant end = e.getEndTime();
        if (in.first == null || end.isBefore(in.first)) {
            in.first = end;
        }
        if (in.last == null || end.isAfter(in.last)) {
            in.last = end;
        }
        switch (name) {
            case SUMMARY:
                in.summaries++;
                summary(e, layouts.computeIfAbsent(type, this::layout));
                break;
            case STATE:
                state(e);
                break;
            case STALL:
                stall(e);
                break;
            case FALLBACK:
                fallback(e);
                break;
            case MODULE_VERDICT:
                moduleVerdict(e);
                break;
            case ROLLED_BACK:
                model.rollbacks.add(new FleetReport.Rollback(e.getStartTime(), intern(string(e, EventFields.CANARY_ARM)) + " "
                        + intern(string(e, EventFields.CANARY_ALGORITHM)), string(e, EventFields.METRIC), string(e, EventFields.EVIDENCE)));
                break;
            default:
                String alarm = ALARMS.get(name);
                if (alarm != null) {
                    if (unflaggedAllocation(e)) {
                        return;
                    }
                    if (name.equals(EventNames.SEND_PATH_ALLOCATION) && "event loop".equals(string(e, EventFields.PATH))) {
                        loopAllocationStorm(e); // the loop's, no connection's
                        return;
                    }
                    if (name.equals(EventNames.CPU_SPIN) && CpuSpinLine.loopLevel(e)) {
                        loopSpin(e); // no connection's alarm: the loop's
                        return;
                    }
                    if (name.equals(EventNames.CPU_SPIN) && !spinEpisodes.add(CpuSpinLine.episodeKey(e))) {
                        return; // one alarm per episode, however many of its events were recorded
                    }
                    alarmsOf(e).counts.merge(alarm, 1, Integer::sum);
                }
        }
    }

    /** A flagged allocation window of an event loop: counted on its loop. */
    private void loopAllocationStorm(RecordedEvent e) {
        String library = intern(string(e, EventFields.LIBRARY));
        String thread = string(e, EventFields.THREAD_NAME);
        FleetReport.LoopAllocationStorm s = model.loopAllocationStorms.computeIfAbsent(library + " " + thread,
                k -> new FleetReport.LoopAllocationStorm(library, thread));
        s.windows++;
        s.maxRate = Math.max(s.maxRate, number(e, EventFields.ALLOCATION_RATE));
        s.saw(e.getStartTime());
    }

    /**
     * A loop-level CpuSpin event: its episode's entry, from the episode's latest event (an ended one first, as the
     * single-recording report keeps it: {@link CpuSpinLine#keep}).
     */
    private void loopSpin(RecordedEvent e) {
        Object key = CpuSpinLine.episodeKey(e);
        CpuSpinLine.keep(loopSpinEvents, e);
        RecordedEvent kept = loopSpinEvents.get(key);
        long episodeNanos = Math.max(0, number(kept, EventFields.EPISODE_DURATION));
        String frames = string(kept, EventFields.TOP_FRAMES);
        int nl = frames.indexOf('\n');
        model.loopSpins.put(String.valueOf(key), new FleetReport.LoopSpin(kept.getEndTime().minusNanos(episodeNanos),
                intern(string(kept, EventFields.LIBRARY)), string(kept, EventFields.THREAD_NAME),
                intern(string(kept, EventFields.LOOP_SPIN)), episodeNanos / 1e9, kept.getDouble(EventFields.CPU_SHARE),
                number(kept, EventFields.LOOP_TASK_DELAY), (int) number(kept, EventFields.LOOP_CONNECTION_COUNT),
                string(kept, EventFields.LOOP_CONNECTIONS), nl < 0 ? frames : frames.substring(0, nl),
                string(kept, EventFields.ENDED_BY)));
    }

    /** Each loop spin episode's latest event (a few per episode of a loop: kept whole). */
    private final Map<Object, RecordedEvent> loopSpinEvents = new HashMap<>();

    /** A Fallback event: its count added to its cause's. */
    private void fallback(RecordedEvent e) {
        String where = intern(string(e, EventFields.WHERE));
        String exception = intern(string(e, EventFields.EXCEPTION));
        FleetReport.FallbackCause c = model.fallbacks.computeIfAbsent(where + " (" + exception + ")",
                k -> new FleetReport.FallbackCause(where, exception));
        c.count += Math.max(0, number(e, EventFields.COUNT));
        if (c.saw(e.getStartTime())) {
            c.consequence = string(e, EventFields.CONSEQUENCE);
        }
    }

    /** A ModuleVerdict event: kept once per verdict, however often the recordings repeat it (at each chunk start). */
    private void moduleVerdict(RecordedEvent e) {
        java.time.Instant time = e.hasField(EventFields.VERDICT_TIME) ? e.getInstant(EventFields.VERDICT_TIME) : e.getStartTime();
        FleetReport.ModuleVerdict v = new FleetReport.ModuleVerdict(intern(string(e, EventFields.LIBRARY)),
                intern(string(e, EventFields.MODULE)), intern(string(e, EventFields.LIBRARY_VERSION)),
                intern(string(e, EventFields.CLASS_LOADER)), "applied".equals(string(e, EventFields.VERDICT)),
                intern(string(e, EventFields.REASON)), time);
        model.moduleVerdicts.putIfAbsent(String.join("\u0000", v.module(), v.version(), v.classLoader(),
                String.valueOf(v.applied()), v.reason(), String.valueOf(time.toEpochMilli())), v);
    }

    /** A SendPathAllocation event the agent did not flag (a measurement, not an alarm). */
    static boolean unflaggedAllocation(RecordedEvent e) {
        return e.getEventType().getName().equals(EventNames.SEND_PATH_ALLOCATION) && e.hasField(EventFields.FLAGGED)
                && !e.getBoolean(EventFields.FLAGGED);
    }

    /** Which of {@link #SUMMARY_FIELDS} the event type has; the missing ones are noted on the input. */
    private boolean[] layout(EventType t) {
        boolean[] has = new boolean[SUMMARY_FIELDS.size() + 1];
        has[SUMMARY_FIELDS.size()] = t.getField(TRANSFER_TIME) != null;
        for (int i = 0; i < SUMMARY_FIELDS.size(); i++) {
            has[i] = t.getField(SUMMARY_FIELDS.get(i)) != null;
            if (!has[i]) {
                in.missingFields.add(SUMMARY_FIELDS.get(i));
            }
        }
        return has;
    }

    private void summary(RecordedEvent e, boolean[] has) {
        String id = has[2] ? string(e, EventFields.CONNECTION_ID) : "";
        if (id.isEmpty()) {
            return; // cannot be told apart from other connections: left out (and the missing field is reported)
        }
        String agent = has[0] ? string(e, EventFields.AGENT_INSTANCE) : "";
        long sequence = has[6] ? number(e, EventFields.SEQUENCE) : 0;
        String role = intern(has[15] ? string(e, EventFields.ROLE) : "");
        // both ends of one connection in one JVM share the connection id: the role keeps them apart
        String key = agent + "|" + role + "|" + id;
        ConnectionModel.Connection c = model.summaries.get(key);
        if (c != null) {
            if (sequence == c.sequence) {
                model.duplicateSummaries++;
                return;
            }
            if (sequence < c.sequence) {
                return; // an earlier periodic summary: the later one already covers it
            }
        } else {
            c = new ConnectionModel.Connection();
            model.summaries.put(key, c);
        }
        c.sequence = sequence;
        c.role = role;
        c.library = intern(has[1] ? string(e, EventFields.LIBRARY) : "");
        c.connectionId = id;
        c.arm = intern(has[3] ? string(e, EventFields.CANARY_ARM) : "");
        c.algorithm = intern(has[4] ? string(e, EventFields.ALGORITHM) : "");
        c.controller = intern(has[5] ? string(e, EventFields.CONTROLLER) : "");
        c.lifetimeNanos = has[7] ? number(e, EventFields.LIFETIME) : Double.NaN;
        c.transferNanos = has[SUMMARY_FIELDS.size()] ? number(e, TRANSFER_TIME) : Double.NaN;
        c.bytesSent = has[8] ? number(e, EventFields.BYTES_SENT) : Double.NaN;
        c.bytesAcked = has[9] ? number(e, EventFields.BYTES_ACKED) : Double.NaN;
        c.bytesLost = has[10] ? number(e, EventFields.BYTES_LOST) : Double.NaN;
        c.rttP50 = has[11] ? positiveOrNaN(number(e, EventFields.RTT_P50)) : Double.NaN;
        c.rttP95 = has[12] ? positiveOrNaN(number(e, EventFields.RTT_P95)) : Double.NaN;
        c.appLimited = has[13] ? number(e, EventFields.APP_LIMITED_TIME) : Double.NaN;
        c.leftSlowStart = has[14] ? (e.getBoolean(EventFields.LEFT_SLOW_START) ? 1 : 0) : -1;
    }

    private void state(RecordedEvent e) {
        String key = string(e, EventFields.LIBRARY) + "|" + string(e, EventFields.CONNECTION_ID);
        ConnectionModel.StateSamples s = model.states.computeIfAbsent(key, k -> new ConnectionModel.StateSamples());
        String arm = intern(string(e, EventFields.CANARY_ARM));
        String algorithm = intern(string(e, EventFields.ALGORITHM));
        s.arm = arm;
        s.algorithm = algorithm;
        long t = e.getStartTime().getEpochSecond() * 1_000_000_000L + e.getStartTime().getNano();
        s.firstNanos = Math.min(s.firstNanos, t);
        s.lastNanos = Math.max(s.lastNanos, t);
        long acked = number(e, EventFields.BYTES_ACKED);
        s.minAcked = Math.min(s.minAcked, acked);
        s.maxAcked = Math.max(s.maxAcked, acked);
        String mode = intern(string(e, EventFields.MODE));
        if (!mode.isEmpty() && !mode.equalsIgnoreCase("slow start") && !mode.equalsIgnoreCase("STARTUP")) {
            s.leftSlowStart = true;
        }
        long srtt = number(e, EventFields.SMOOTHED_RTT);
        if (srtt > 0) {
            s.rtt.add(srtt);
            s.lastSrtt = srtt;
        }
        ConnectionModel.ArmSeries series = model.series.computeIfAbsent(ConnectionModel.seriesName(arm, algorithm),
                k -> new ConnectionModel.ArmSeries());
        // mode time and the time series from the periodic samples only: a mode change is an extra sample at
        // an uneven time, written by a sender thread (so the file may hand it out before earlier samples)
        String trigger = string(e, EventFields.TRIGGER);
        if (!trigger.isEmpty() && !trigger.equals("periodic")) {
            return;
        }
        s.countMode(mode, t, weight(e));
        long since = t - s.firstPeriodic;
        series.cwnd.add(since, number(e, EventFields.CONGESTION_WINDOW));
        if (srtt > 0) {
            series.srtt.add(since, srtt);
        }
        long pacing = number(e, EventFields.PACING_RATE);
        if (pacing > 0) {
            series.pacing.add(since, pacing);
        }
    }

    /**
     * The periods a periodic CongestionState stands for: its {@code weight} (the agent's sample beyond
     * {@code jfr.state-connections} active connections), 1 when absent (older agents) or not positive.
     */
    static double weight(RecordedEvent e) {
        double w = e.hasField(EventFields.WEIGHT) ? e.getDouble(EventFields.WEIGHT) : 1;
        return w > 0 ? w : 1;
    }

    private void stall(RecordedEvent e) {
        ConnectionModel.Alarms a = alarmsOf(e);
        a.stalls++;
        if (a.stallWaits == null) {
            a.stallWaits = new LogHistogram();
        }
        a.stallWaits.add(number(e, EventFields.WAIT_TIME));
    }

    private ConnectionModel.Alarms alarmsOf(RecordedEvent e) {
        return model.alarms.computeIfAbsent(string(e, EventFields.LIBRARY) + "|" + string(e, EventFields.CONNECTION_ID),
                k -> new ConnectionModel.Alarms());
    }

    private String intern(String s) {
        String k = strings.putIfAbsent(s, s);
        return k != null ? k : s;
    }

    private static double positiveOrNaN(long v) {
        return v > 0 ? v : Double.NaN;
    }
}
