package dev.ccagent.agent.jfr;

import dev.ccagent.jfr.AgentLifecycle;
import jdk.jfr.Recording;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RecordingSummaryTest {

    @Test
    void readsOurEventsAndRejectsBrokenFilesClearly(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("ok.jfr");
        try (Recording r = new Recording()) {
            r.enable(AgentLifecycle.class);
            r.start();
            for (int i = 0; i < 3; i++) {
                AgentLifecycle e = new AgentLifecycle();
                e.action = "test " + i;
                e.commit();
            }
            r.stop();
            r.dump(file);
        }
        RecordingSummary s = RecordingSummary.read(file);
        assertEquals(3, s.count("dev.ccagent.AgentLifecycle"));
        assertEquals("test 0", s.events("dev.ccagent.AgentLifecycle").get(0).getString("action"));

        byte[] bytes = Files.readAllBytes(file);
        Path truncated = dir.resolve("truncated.jfr");
        Files.write(truncated, Arrays.copyOf(bytes, bytes.length / 2));
        IOException e = assertThrows(IOException.class, () -> RecordingSummary.read(truncated));
        assertTrue(e.getMessage().contains("truncated.jfr"), e.getMessage());
        assertTrue(e.getMessage().contains("truncated") || e.getMessage().contains("corrupt"), e.getMessage());

        Path garbage = dir.resolve("garbage.jfr");
        Files.writeString(garbage, "this is not a flight recording\n".repeat(50));
        e = assertThrows(IOException.class, () -> RecordingSummary.read(garbage));
        assertTrue(e.getMessage().contains("corrupt or not a JFR file"), e.getMessage());

        Path empty = dir.resolve("empty.jfr");
        Files.createFile(empty);
        e = assertThrows(IOException.class, () -> RecordingSummary.read(empty));
        assertTrue(e.getMessage().contains("empty"), e.getMessage());
        e = assertThrows(IOException.class, () -> RecordingSummary.read(dir.resolve("missing.jfr")));
        assertTrue(e.getMessage().contains("does not exist"), e.getMessage());
    }
}
