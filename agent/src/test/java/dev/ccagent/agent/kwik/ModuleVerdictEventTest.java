package dev.ccagent.agent.kwik;

import dev.ccagent.agent.config.AgentArgs;
import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.runtime.AgentRuntime;
import dev.ccagent.jfr.EventFields;
import dev.ccagent.jfr.EventNames;
import dev.ccagent.jfr.JfrSwitch;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A module's verdict for a class loader is in the recording (read back by the JDK's parser): committed when
 * the module decides, and again at the start of a recording begun after the verdict. The verdicts are real:
 * kwik 0.10.9's jar in a loader that does not see the agent (skipped: the hooks are not reachable there), and
 * kwik on the test's own class path (applied, with the stream-stall fix).
 */
class ModuleVerdictEventTest {

    @Test
    void aSkipIsRecordedAtTheVerdictAndAgainInARecordingStartedLater(@TempDir Path dir) throws Exception {
        AgentConfig config = AgentArgs.parse("log=off").config();
        URL kwikJar = tech.kwik.core.cc.CongestionController.class.getProtectionDomain().getCodeSource().getLocation();
        Path during = dir.resolve("during.jfr");
        Path later = dir.resolve("later.jfr");
        String loader;
        try (URLClassLoader isolated = new URLClassLoader("kwik-only", new URL[] {kwikJar}, ClassLoader.getPlatformClassLoader())) {
            loader = isolated.getName() + "@" + Integer.toHexString(System.identityHashCode(isolated));
            try (Recording r = recordingOfVerdicts()) {
                assertFalse(new KwikModule(config).appliesTo(isolated), "kwik without the agent's classes is skipped");
                assertTrue(new KwikModule(config).appliesTo(KwikModule.class.getClassLoader()), "kwik beside the agent applies");
                r.stop();
                r.dump(during);
            }
        }
        // a recording begun after both verdicts: they come again at its first chunk's start
        try (Recording r = recordingOfVerdicts()) {
            r.stop();
            r.dump(later);
        }
        String line = AgentRuntime.moduleVerdicts().stream().filter(l -> l.contains(" in " + loader + ": skipped: "))
                .findFirst().orElseThrow();
        for (Path file : List.of(during, later)) {
            String kind = file == during ? "at verdict" : "chunk start";
            RecordedEvent skip = only(file, kind, loader);
            assertEquals("skipped", skip.getString(EventFields.VERDICT), file.toString());
            assertEquals("kwik", skip.getString(EventFields.LIBRARY));
            assertEquals("kwik 0.10.x (tech.kwik.core)", skip.getString(EventFields.MODULE));
            assertEquals("0.10.9", skip.getString(EventFields.LIBRARY_VERSION));
            String reason = skip.getString(EventFields.REASON);
            assertTrue(reason.contains("dev.ccagent.agent.kwik.KwikHooks"), reason);
            assertTrue(line.endsWith(": skipped: " + reason), "the event's reason is the log line's: " + line);
            long verdictTime = skip.getInstant(EventFields.VERDICT_TIME).toEpochMilli();
            assertTrue(!skip.getStartTime().isBefore(java.time.Instant.ofEpochMilli(verdictTime).minusSeconds(1)),
                    "verdict time " + verdictTime + " before the event " + skip.getStartTime());
            RecordedEvent fix = only(file, kind, KwikLinkage.loaderName(KwikModule.class.getClassLoader()), "fix.kwik-stream-stall");
            assertEquals("applied", fix.getString(EventFields.VERDICT));
            assertTrue(fix.getString(EventFields.REASON).startsWith("on by default"), fix.getString(EventFields.REASON));
        }
        assertEquals(only(during, "at verdict", loader).getLong(EventFields.VERDICT_TIME),
                only(later, "chunk start", loader).getLong(EventFields.VERDICT_TIME), "the repeat carries the verdict's time");
    }

    private static Recording recordingOfVerdicts() {
        JfrSwitch.install();
        Recording r = new Recording();
        r.enable(EventNames.MODULE_VERDICT);
        r.start();
        JfrSwitch.refresh();
        return r;
    }

    private static RecordedEvent only(Path file, String kind, String loader) throws java.io.IOException {
        return only(file, kind, loader, "kwik 0.10.x (tech.kwik.core)");
    }

    /** The one event of that kind for that loader and module in the file. */
    private static RecordedEvent only(Path file, String kind, String loader, String module) throws java.io.IOException {
        List<RecordedEvent> found = new ArrayList<>();
        for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
            if (e.getEventType().getName().equals(EventNames.MODULE_VERDICT) && kind.equals(e.getString(EventFields.KIND))
                    && loader.equals(e.getString(EventFields.CLASS_LOADER)) && module.equals(e.getString(EventFields.MODULE))) {
                found.add(e);
            }
        }
        assertEquals(1, found.size(), kind + " " + module + " in " + loader + " in " + file + ": " + found);
        return found.get(0);
    }
}
