package dev.ccagent.it.kwik;

import dev.ccagent.it.Acceptance;
import dev.ccagent.it.Redeploys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Redeploys (issue #24): kwik loaded 5 times in a throw-away {@code URLClassLoader} whose parent is
 * the application loader, one download in each, the loader dropped ({@link dev.ccagent.it.RedeployMain}). The
 * JDK says how many loaders were collected (cleared weak references after full GCs): all 5 without
 * the agent, and all 5 with it attached for {@code cc=bbr1}, {@code cc=stock}, a canary and a JFR
 * recording on. (kwik's own MemoryMXBean listener is removed by the main, as a container would.)
 */
@Acceptance("loaders collected over 5 redeploys with the agent and 5 without")
class KwikRedeployTest {

    @Test
    @Timeout(value = 900, unit = TimeUnit.SECONDS)
    void droppedLoadersAreCollected() throws Exception {
        Path dir = KwikIt.workDir("redeploy");
        Path app = Redeploys.copyClasses(dir.resolve("webapp"), KwikRedeployApp.class);
        List<String> urls = new ArrayList<>();
        urls.add(app.toString());
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        String sep = File.separator;
        for (String e : cp.split(File.pathSeparator)) {
            if (e.contains(sep + "tech" + sep + "kwik" + sep + "kwik" + sep)
                    || e.contains(sep + "tech" + sep + "kwik" + sep + "agent15" + sep)
                    || e.contains(sep + "at" + sep + "favre" + sep) || e.contains(sep + "io" + sep + "whitfin" + sep)) {
                urls.add(e);
            }
        }
        assertTrue(urls.stream().anyMatch(u -> u.contains("kwik-0.10")), "kwik not on the test class path: " + cp);
        Path jfr = KwikIt.freshFile(dir, "redeploy.jfr");
        Map<String, String> runs = new LinkedHashMap<>();
        runs.put("no agent", null);
        runs.put("cc=bbr1", "cc=bbr1;log=warn");
        runs.put("cc=stock", "cc=stock;log=warn");
        runs.put("canary", "cc=stock;canary=bbr1:50%;log=warn");
        runs.put("recording", "cc=bbr1;canary=cubic:50%;log=warn;jfr=" + jfr);
        Redeploys.Outcome o = Redeploys.run(dir, KwikIt.agentJar(), KwikRedeployApp.class, urls, KwikIt.keyStore(),
                2_000_000L, runs, List.of());
        System.out.println("[it] redeploy: loaders collected per run " + o.collected()
                + "; stalled downloads retried per run " + o.retries());
        assertTrue(o.failures().isEmpty(), o.failures());
        assertTrue(Files.size(jfr) > 0, "the recording was written");
    }
}
