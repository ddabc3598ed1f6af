package dev.ccagent.report;

import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * The report's one JFR reader: streams a recording event by event ({@link RecordingFile#readEvent()},
 * never a whole recording in memory) and reads events' fields by name, tolerating fields an agent of
 * another version does not write.
 */
final class JfrEvents {

    private JfrEvents() {
    }

    /** The file could not be read whole: {@link #eventsRead} events were handed out before the failure. */
    static final class Damaged extends Exception {
        private static final long serialVersionUID = 1L;
        final long eventsRead;

        Damaged(long eventsRead, Throwable cause) {
            super(cause.getMessage() != null ? cause.getMessage() : cause.getClass().getSimpleName(), cause);
            this.eventsRead = eventsRead;
        }
    }

    /**
     * Hands every event of {@code file} to {@code sink}, in file order; returns how many. A file that cannot
     * be opened, is not a recording, is truncated or damaged (or an event {@code sink} cannot take) ends
     * the reading with {@link Damaged}, after the events before the damage were handed out.
     */
    static long read(Path file, Consumer<RecordedEvent> sink) throws Damaged {
        long events = 0;
        try (RecordingFile in = new RecordingFile(file)) {
            while (in.hasMoreEvents()) {
                RecordedEvent e = in.readEvent();
                events++;
                sink.accept(e);
            }
        } catch (IOException | RuntimeException | Error e) {
            if (e instanceof VirtualMachineError && !(e instanceof StackOverflowError)) {
                throw (VirtualMachineError) e;
            }
            throw new Damaged(events, e);
        }
        return events;
    }

    /** The field as text; "" when the event has no such field or it is null. */
    static String string(RecordedEvent e, String field) {
        if (!e.hasField(field)) {
            return "";
        }
        Object v = e.getValue(field);
        return v == null ? "" : v.toString();
    }

    /** The field as a number (a duration in nanoseconds); 0 when the event has no such numeric field. */
    static long number(RecordedEvent e, String field) {
        if (!e.hasField(field)) {
            return 0;
        }
        Object v = e.getValue(field);
        if (v instanceof Duration) {
            return ((Duration) v).toNanos();
        }
        return v instanceof Number ? ((Number) v).longValue() : 0;
    }
}
