package dev.ccagent.agent.kwik;

import dev.ccagent.agent.instrument.Requirement;
import org.junit.jupiter.api.Test;

import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Where observe-only's send-loop window hooks apply, checked against kwik's own class files, and its log line. */
class KwikObserveModuleTest {

    /** kwik 0.10.3 (lacks the swap's RecoveryManager.congestionController): every window hook's requirement holds. */
    @Test
    void kwik0103HasEveryWindowHook() throws Exception {
        Path jar = kwikJar("0.10.3");
        assumeTrue(Files.isRegularFile(jar), "kwik 0.10.3 in the local repository: " + jar);
        try (URLClassLoader loader = new URLClassLoader(new URL[] {jar.toUri().toURL()}, KwikObserveModuleTest.class.getClassLoader().getParent())) {
            List<String> missing = Requirement.missingIn(KwikObserveModule.WINDOW.subList(0, 4), loader);
            assertEquals(List.of(), missing);
        }
    }

    /** kwik 0.10.9 (where the swap applies) renamed the stream's frame supplier: the line would name it. */
    @Test
    void kwik0109LacksTheStreamFrameSupplierOnly() {
        List<String> missing = Requirement.missingIn(KwikObserveModule.WINDOW, KwikObserveModuleTest.class.getClassLoader());
        assertEquals(1, missing.size(), missing.toString());
        assertTrue(missing.get(0).contains("sendFrame"), missing.toString());
    }

    @Test
    void theLineListsWhatItObserves() {
        String v = KwikObserveModule.verdict(List.of("field X not found"), List.of());
        assertEquals("controller swap skipped (field X not found); observing: spin detector (CPU without progress),"
                + " send-loop window (SendLoopSpin, AckOnlySendLoop, SendPathAllocation); kwik's behaviour unchanged", v);
    }

    @Test
    void whereTheWindowHooksLackSomethingTheLineSaysWhatAndTheSpinDetectorWatchesAlone() {
        String v = KwikObserveModule.verdict(List.of("field X not found"), List.of("method Y.z()V not found"));
        assertEquals("controller swap skipped (field X not found); observing: spin detector (CPU without progress)"
                + " (send-loop window not observed: method Y.z()V not found); kwik's behaviour unchanged", v);
    }

    /** The kwik 0.10.x jar of {@code version} beside the one on the test class path (the local Maven repository). */
    static Path kwikJar(String version) throws Exception {
        Path onPath = Path.of(tech.kwik.core.send.SenderImpl.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        return onPath.getParent().getParent().resolve(version).resolve("kwik-" + version + ".jar");
    }
}
