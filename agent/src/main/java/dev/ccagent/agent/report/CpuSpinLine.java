package dev.ccagent.agent.report;

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
        long id = e.hasField("episodeId") ? e.getLong("episodeId") : 0;
        return id > 0 ? e.getString("library") + "|" + e.getString("connectionId") + "|" + id : new Object();
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
        boolean hadEnded = !"ongoing".equals(had.getString("endedBy"));
        boolean ended = !"ongoing".equals(e.getString("endedBy"));
        if (ended && !hadEnded || ended == hadEnded && e.getEndTime().isAfter(had.getEndTime())) {
            episodes.put(key, e);
        }
        return false;
    }

    static String of(RecordedEvent e) {
        String frames = e.hasField("topFrames") && e.getString("topFrames") != null ? e.getString("topFrames") : "";
        String top = frames.isEmpty() ? "(no stack)" : String.join(" <- ", frames.lines().limit(3).toArray(String[]::new));
        String flame = e.hasField("flameGraph") && e.getString("flameGraph") != null && !e.getString("flameGraph").isEmpty()
                ? "\n      flame graph " + e.getString("flameGraph") : "";
        long episodeNanos = e.hasField("episodeDuration") ? e.getLong("episodeDuration") : 0;
        double seconds = episodeNanos > 0 ? episodeNanos / 1e9
                : Duration.between(e.getStartTime(), e.getEndTime()).toMillis() / 1e3;
        String ended = "ongoing".equals(e.getString("endedBy"))
                ? "still ongoing when last recorded (" + e.getEndTime() + ")" : "ended by " + e.getString("endedBy");
        Instant since = episodeNanos > 0 ? e.getEndTime().minusNanos(episodeNanos) : e.getStartTime();
        return String.format(Locale.ROOT, "%s %s connection %s, thread \"%s\": %.1f s at %.0f%% of a core, %d B moved, "
                        + "%s%n      at %s%s", since, e.getString("library"),
                e.getString("connectionId"), e.getString("threadName"), seconds, 100 * e.getDouble("cpuShare"),
                e.getLong("appBytes") + e.getLong("bytesAcked"), ended, top, flame);
    }

    static void section(StringBuilder sb, java.util.Collection<RecordedEvent> episodes) {
        if (episodes.isEmpty()) {
            return;
        }
        sb.append("\nCPU spins (a sending thread burned CPU while its connection made no progress): ")
                .append(episodes.size()).append(" episode(s)\n");
        for (RecordedEvent e : episodes) {
            sb.append("  ").append(of(e)).append('\n');
        }
    }
}
