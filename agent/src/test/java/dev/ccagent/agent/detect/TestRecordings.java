package dev.ccagent.agent.detect;

import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/** The monitors' tests' recordings: one event enabled, and its events read back by the JDK's parser. */
final class TestRecordings {

    private TestRecordings() {
    }

    /** A running recording of one event, with the agent's JFR switch on. */
    static Recording of(String eventName) {
        dev.ccagent.jfr.JfrSwitch.install();
        Recording rec = new Recording();
        rec.enable(eventName);
        rec.start();
        dev.ccagent.jfr.JfrSwitch.refresh();
        return rec;
    }

    /** The events of that name in a recording file, in the order they ended. */
    static List<RecordedEvent> read(Path file, String eventName) throws IOException {
        List<RecordedEvent> out = new ArrayList<>();
        for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
            if (e.getEventType().getName().equals(eventName)) {
                out.add(e);
            }
        }
        out.sort(Comparator.comparing(RecordedEvent::getEndTime));
        return out;
    }
}
