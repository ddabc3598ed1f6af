package dev.ccagent.it.netty;

import dev.ccagent.it.Acceptance;
import dev.ccagent.it.Redeploys;
import dev.ccagent.jfr.EventFields;
import dev.ccagent.jfr.EventNames;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Redeploys of a Netty QUIC application (issue 33, item 4): Netty 4.2.18 with its native quiche library, the
 * test apps and the application loaded 5 times in a throw-away {@code URLClassLoader} whose parent is the
 * application loader, one checksummed download in each, the loader dropped ({@link dev.ccagent.it.RedeployMain}).
 * Each loader loads Netty's native library anew (Netty copies it to a file of its own per loader). The JDK says
 * how many loaders were collected (cleared weak references after full GCs): as many with the agent, for
 * {@code netty.cc=bbr} with pacing, a canary and a recording, as without it.
 */
@Acceptance("loaders of a Netty QUIC application collected over 5 redeploys with the agent and 5 without")
class NettyRedeployTest {

    @Test
    @Timeout(value = 900, unit = TimeUnit.SECONDS)
    void droppedLoadersAreCollected() throws Exception {
        Path dir = NettyApp.WORK.resolve("redeploy").toAbsolutePath();
        Files.createDirectories(dir);
        Path app = Redeploys.copyClasses(dir.resolve("webapp"), NettyRedeployApp.class);
        List<String> urls = new ArrayList<>();
        urls.add(app.toString());
        urls.addAll(Arrays.asList(NettyApp.testAppsClassPath().split(File.pathSeparator)));
        urls.addAll(Arrays.asList(NettyApp.jars(NettyApp.Version.LATEST).split(File.pathSeparator)));
        Path jfr = NettyApp.freshFile("redeploy/redeploy.jfr");
        Map<String, String> runs = new LinkedHashMap<>();
        runs.put("no agent", null);
        runs.put("netty.cc=bbr, paced", "netty.cc=bbr;netty.pacing=on;log=warn");
        runs.put("canary", "netty.cc=cubic;netty.canary=bbr:50%;log=warn");
        runs.put("recording", "netty.cc=bbr;netty.pacing=on;netty.stats.period=200ms;log=warn;jfr=" + jfr);
        Path agentJar = Path.of(System.getProperty("ccagent.jar")).toAbsolutePath().normalize();
        Redeploys.Outcome o = Redeploys.run(dir, agentJar, NettyRedeployApp.class, urls, NettyApp.keystore(), 2_000_000L,
                runs, List.of());
        System.out.println("[it] netty redeploy: loaders collected per run " + o.collected());
        int withoutAgent = o.collected().get("no agent");
        for (Map.Entry<String, Integer> e : o.collected().entrySet()) {
            assertTrue(e.getValue() >= withoutAgent, "the agent pinned a loader that Netty alone does not: "
                    + o.collected() + "; " + o.failures());
        }
        assertTrue(o.failures().isEmpty(), o.failures());
        // each deployment loaded Netty's native library anew: a file of its own, mapped by the kernel
        for (Map.Entry<String, String> run : o.outputs().entrySet()) {
            java.util.Set<String> libraries = new java.util.TreeSet<>();
            run.getValue().lines().filter(l -> l.startsWith("NATIVE [")).forEach(l -> libraries.addAll(
                    Arrays.asList(l.substring("NATIVE [".length(), l.length() - 1).split(", "))));
            assertEquals(Redeploys.ROUNDS, libraries.size(), run.getKey() + ": one quiche library per deployment: " + libraries);
        }
        // the agent ran in every deployment: the JDK's parser finds each deployment's server connection on quiche's bbr
        long assigned = RecordingFile.readAllEvents(jfr).stream()
                .filter(e -> e.getEventType().getName().equals(EventNames.ALGORITHM_ASSIGNED)
                        && "server".equals(e.getString(EventFields.ROLE))
                        // the algorithm as read back from quiche 0.29.3 (Netty 4.2.18): its BBR is bbr2_gcongestion
                        && "bbr2_gcongestion".equals(e.getString(EventFields.ALGORITHM)))
                .count();
        assertEquals(Redeploys.ROUNDS, assigned, "server connections on quiche's bbr in the recording run");
    }
}
