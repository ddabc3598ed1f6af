package dev.ccagent.agent.jfr;

import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Reads a recording and keeps ccagent's events ({@code dev.ccagent.*}), for tests and for operators:
 * {@code java -cp ccagent.jar dev.ccagent.agent.jfr.RecordingSummary rec.jfr} prints the count per
 * event type and every spin / ACK-loop / flagged-allocation event. A missing, truncated or corrupt
 * file gives one clear {@link IOException} naming the file and what is wrong with it.
 */
public final class RecordingSummary {

    private final Path file;
    private final List<RecordedEvent> events;
    private final Map<String, Integer> counts;

    private RecordingSummary(Path file, List<RecordedEvent> events, Map<String, Integer> counts) {
        this.file = file;
        this.events = events;
        this.counts = counts;
    }

    /** Reads every event; keeps ours, counts all. */
    public static RecordingSummary read(Path file) throws IOException {
        if (!Files.isRegularFile(file)) {
            throw new IOException("JFR recording " + file + " does not exist");
        }
        if (Files.size(file) == 0) {
            throw new IOException("JFR recording " + file + " is empty (the JVM may have been killed before it was written)");
        }
        List<RecordedEvent> ours = new ArrayList<>();
        Map<String, Integer> counts = new TreeMap<>();
        try (RecordingFile r = new RecordingFile(file)) {
            while (r.hasMoreEvents()) {
                RecordedEvent e = r.readEvent();
                String name = e.getEventType().getName();
                counts.merge(name, 1, Integer::sum);
                if (name.startsWith("dev.ccagent.")) {
                    ours.add(e);
                }
            }
        } catch (java.io.EOFException e) {
            throw new IOException("JFR recording " + file + " is truncated (" + Files.size(file)
                    + " bytes; cut off while being written or copied)", e);
        } catch (IOException | RuntimeException e) {
            throw new IOException("JFR recording " + file + " is corrupt or not a JFR file: " + e.getMessage(), e);
        }
        return new RecordingSummary(file, ours, counts);
    }

    public Path file() {
        return file;
    }

    /** ccagent's events in file order. */
    public List<RecordedEvent> events() {
        return events;
    }

    public List<RecordedEvent> events(String name) {
        List<RecordedEvent> out = new ArrayList<>();
        for (RecordedEvent e : events) {
            if (e.getEventType().getName().equals(name)) {
                out.add(e);
            }
        }
        return out;
    }

    /** Events per type name, all types. */
    public Map<String, Integer> counts() {
        return counts;
    }

    public int count(String name) {
        return counts.getOrDefault(name, 0);
    }

    public static void main(String[] args) {
        if (args.length != 1) {
            System.err.println("usage: java -cp ccagent.jar " + RecordingSummary.class.getName() + " RECORDING.jfr");
            System.exit(2);
        }
        try {
            RecordingSummary s = read(Path.of(args[0]));
            s.counts.forEach((k, v) -> {
                if (k.startsWith("dev.ccagent.")) {
                    System.out.printf("%-32s %8d%n", k, v);
                }
            });
            for (RecordedEvent e : s.events) {
                String n = e.getEventType().getName();
                if (n.equals("dev.ccagent.SendLoopSpin") || n.equals("dev.ccagent.AckOnlySendLoop")
                        || (n.equals("dev.ccagent.SendPathAllocation") && e.getBoolean("flagged"))) {
                    System.out.println(e);
                }
            }
        } catch (IOException e) {
            System.err.println(e.getMessage());
            System.exit(1);
        }
    }
}
