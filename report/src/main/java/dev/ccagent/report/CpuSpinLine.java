package dev.ccagent.report;

import dev.ccagent.jfr.EventFields;
import jdk.jfr.consumer.RecordedEvent;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Locale;

/** The report's "CPU spins" section: one line per spin episode (its latest {@code dev.ccagent.CpuSpin} event). */
final class CpuSpinLine {

    private CpuSpinLine() {
    }

    /**
     * Which episode an event belongs to: agents that commit an episode several times (at detection,
     * while it lasts, at its end) give every event its {@code episodeId}; an older agent's event is an
     * episode of its own.
     */
    static Object episodeKey(RecordedEvent e) {
        long id = e.hasField(EventFields.EPISODE_ID) ? e.getLong(EventFields.EPISODE_ID) : 0;
        // a loop's episode names no connection: the ids of the connections on it (random, fixed at detection) tell
        // one JVM's episode 1 from another's
        return id > 0 ? e.getString(EventFields.LIBRARY) + "|" + e.getString(EventFields.CONNECTION_ID) + "|" + id
                + (loopLevel(e) ? "|" + e.getString(EventFields.LOOP_CONNECTIONS) : "") : new Object();
    }

    /**
     * Keeps the episode's latest event in {@code episodes} (an ended one over an "ongoing" one of the
     * same time: the chunk-end hook may record one after the end); true when the episode is new.
     */
    static boolean keep(Map<Object, RecordedEvent> episodes, RecordedEvent e) {
        Object key = episodeKey(e);
        RecordedEvent had = episodes.get(key);
        if (had == null) {
            episodes.put(key, e);
            return true;
        }
        boolean hadEnded = !"ongoing".equals(had.getString(EventFields.ENDED_BY));
        boolean ended = !"ongoing".equals(e.getString(EventFields.ENDED_BY));
        if (ended && !hadEnded || ended == hadEnded && e.getEndTime().isAfter(had.getEndTime())) {
            episodes.put(key, e);
        }
        return false;
    }

    static String of(RecordedEvent e) {
        String frames = e.hasField(EventFields.TOP_FRAMES) && e.getString(EventFields.TOP_FRAMES) != null ? e.getString(EventFields.TOP_FRAMES) : "";
        String top = frames.isEmpty() ? "(no stack)" : String.join(" <- ", frames.lines().limit(3).toArray(String[]::new));
        String flame = e.hasField(EventFields.FLAME_GRAPH) && e.getString(EventFields.FLAME_GRAPH) != null && !e.getString(EventFields.FLAME_GRAPH).isEmpty()
                ? "\n      flame graph " + e.getString(EventFields.FLAME_GRAPH) : "";
        long episodeNanos = e.hasField(EventFields.EPISODE_DURATION) ? e.getLong(EventFields.EPISODE_DURATION) : 0;
        double seconds = episodeNanos > 0 ? episodeNanos / 1e9
                : Duration.between(e.getStartTime(), e.getEndTime()).toMillis() / 1e3;
        String ended = "ongoing".equals(e.getString(EventFields.ENDED_BY))
                ? "still ongoing when last recorded (" + e.getEndTime() + ")" : "ended by " + e.getString(EventFields.ENDED_BY);
        Instant since = episodeNanos > 0 ? e.getEndTime().minusNanos(episodeNanos) : e.getStartTime();
        return String.format(Locale.ROOT, "%s %s %s, thread \"%s\": %.1f s at %.0f%% of a core, %d B moved, "
                        + "%s%n      at %s%s", since, e.getString(EventFields.LIBRARY), where(e),
                e.getString(EventFields.THREAD_NAME), seconds, 100 * e.getDouble(EventFields.CPU_SHARE),
                e.getLong(EventFields.APP_BYTES) + e.getLong(EventFields.BYTES_ACKED), ended, top, flame);
    }

    /** A spin of a shared event loop itself (no connection blamed), from an agent that names the connections on it. */
    static boolean loopLevel(RecordedEvent e) {
        return e.hasField(EventFields.LOOP_CONNECTION_COUNT) && e.getInt(EventFields.LOOP_CONNECTION_COUNT) > 0;
    }

    /**
     * "connection ID", or for a spin of a shared event loop itself (an agent that names the connections on it)
     * "event loop blocked, tasks 2.100 s late, 3 QUIC connections starved: a,b,c" or "event loop polling without
     * work, tasks 0.000 s late, 3 QUIC connections on it: a,b,c".
     */
    static String where(RecordedEvent e) {
        if (!loopLevel(e)) {
            return "connection " + e.getString(EventFields.CONNECTION_ID);
        }
        int n = e.getInt(EventFields.LOOP_CONNECTION_COUNT);
        boolean blocked = !e.hasField(EventFields.LOOP_SPIN) || !"polling".equals(e.getString(EventFields.LOOP_SPIN));
        return String.format(Locale.ROOT, "event loop %s, tasks %.3f s late, %d QUIC connection%s %s: %s",
                blocked ? "blocked" : "polling without work", e.getLong(EventFields.LOOP_TASK_DELAY) / 1e9, n,
                n == 1 ? "" : "s", blocked ? "starved" : "on it", e.getString(EventFields.LOOP_CONNECTIONS));
    }

    static void section(StringBuilder sb, java.util.Collection<RecordedEvent> episodes) {
        if (episodes.isEmpty()) {
            return;
        }
        sb.append("\nCPU spins (a sending thread or event loop burned CPU while its connections made no progress): ")
                .append(episodes.size()).append(" episode(s)\n");
        for (RecordedEvent e : episodes) {
            sb.append("  ").append(of(e)).append('\n');
        }
    }
}
