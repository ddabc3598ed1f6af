package dev.ccagent.agent.report;

import jdk.jfr.consumer.RecordedEvent;

import java.time.Duration;
import java.util.List;
import java.util.Locale;

/** The report's "CPU spins" section: one line per {@code dev.ccagent.CpuSpin} episode. */
final class CpuSpinLine {

    private CpuSpinLine() {
    }

    static String of(RecordedEvent e) {
        String frames = e.hasField("topFrames") && e.getString("topFrames") != null ? e.getString("topFrames") : "";
        String top = frames.isEmpty() ? "(no stack)" : String.join(" <- ", frames.lines().limit(3).toArray(String[]::new));
        String flame = e.hasField("flameGraph") && e.getString("flameGraph") != null && !e.getString("flameGraph").isEmpty()
                ? "\n      flame graph " + e.getString("flameGraph") : "";
        return String.format(Locale.ROOT, "%s %s connection %s, thread \"%s\": %.1f s at %.0f%% of a core, %d B moved, "
                        + "ended by %s%n      at %s%s", e.getStartTime(), e.getString("library"),
                e.getString("connectionId"), e.getString("threadName"),
                Duration.between(e.getStartTime(), e.getEndTime()).toMillis() / 1e3, 100 * e.getDouble("cpuShare"),
                e.getLong("appBytes") + e.getLong("bytesAcked"), e.getString("endedBy"), top, flame);
    }

    static void section(StringBuilder sb, List<String> lines) {
        if (lines.isEmpty()) {
            return;
        }
        sb.append("\nCPU spins (a sending thread burned CPU while its connection made no progress): ")
                .append(lines.size()).append('\n');
        for (String l : lines) {
            sb.append("  ").append(l).append('\n');
        }
    }
}
