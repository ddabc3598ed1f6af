package dev.ccagent.it.demo;

import dev.ccagent.it.ForkedJvm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code java -jar tools/target/ccagent-demo.jar --quick} as a user runs it (the demo jar
 * finds the build tree itself): it completes, prints stock and BBR side by side with BBR faster on
 * the lossy link, a canary table, and writes the HTML report. Without a build tree: exit 1 with the
 * hint. The production jar no longer runs it: {@code ccagent.jar demo} only says where it lives.
 */
class DemoTest {

    static final Pattern ROW = Pattern.compile("^\\s+(kwik stock NewReno|kwik \\+ bbr1 \\(agent\\))\\s+([\\d.]+) Mbit/s\\s+([\\d.]+) s");
    static final Pattern HTML = Pattern.compile("^HTML report: (\\S+\\.html)");

    static Path agentJar() {
        Path jar = Path.of(System.getProperty("ccagent.jar")).toAbsolutePath().normalize();
        assertTrue(Files.isRegularFile(jar), jar + " missing: build the agent first");
        return jar;
    }

    static Path demoJar() {
        Path jar = Path.of(System.getProperty("ccagent.demo.jar")).toAbsolutePath().normalize();
        assertTrue(Files.isRegularFile(jar), jar + " missing: the build makes it (process-classes)");
        return jar;
    }

    static Path work(String name) throws Exception {
        Path dir = Path.of(System.getProperty("ccagent.it.work", System.getProperty("java.io.tmpdir"))).resolve(name);
        Files.createDirectories(dir);
        return dir;
    }

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void quickDemoShowsBbrFasterThanStockAndWritesTheReport() throws Exception {
        Path dir = work("demo");
        Path out = dir.resolve("out");
        agentJar();
        try (ForkedJvm demo = ForkedJvm.builder("demo", "dev.ccagent.it.demo.DemoLauncher")
                .classPath(demoJar().toString())
                .dir(dir)
                .args("--quick", "--out", out.toString())
                .start()) {
            int exit = demo.waitFor(Duration.ofSeconds(280));
            String stdout = demo.stdout();
            assertEquals(0, exit, "demo failed" + demo.describe());
            double stock = -1;
            double bbr = -1;
            double stockSeconds = -1;
            double bbrSeconds = -1;
            String html = null;
            for (String line : stdout.split("\n")) {
                Matcher m = ROW.matcher(line);
                if (m.find()) {
                    if (m.group(1).startsWith("kwik stock")) {
                        stock = Double.parseDouble(m.group(2));
                        stockSeconds = Double.parseDouble(m.group(3));
                    } else {
                        bbr = Double.parseDouble(m.group(2));
                        bbrSeconds = Double.parseDouble(m.group(3));
                    }
                }
                Matcher h = HTML.matcher(line);
                if (h.find()) {
                    html = h.group(1);
                }
            }
            assertTrue(stock > 0 && bbr > 0, "no side-by-side rows:\n" + stdout);
            // the demo's own side-by-side at 1% loss: BBR 4.5-6.5x stock's goodput in 14 gate runs (2026-12-04); to
            // fail, BBR must lose its whole lead, beyond any run seen: odds below 1e-6 a run (a log-normal model of
            // that spread puts a ratio of 1 more than 10 of its spreads away)
            assertTrue(bbr > stock && bbrSeconds < stockSeconds,
                    "BBR not faster than stock NewReno at 1% loss: " + bbr + " vs " + stock + " Mbit/s\n" + stdout);
            assertTrue(stdout.contains("Canary run: canary=bbr1:50%"), "no canary run:\n" + stdout);
            assertTrue(stdout.contains("] run 1/3") && stdout.contains("] run 3/3"), "no progress lines:\n" + stdout);
            assertTrue(html != null, "no HTML report path:\n" + stdout);
            Path page = Path.of(html);
            assertTrue(Files.isRegularFile(page) && Files.size(page) > 1000, page + " not written");
            // the report's page (FleetHtml, as `report --html`): inline SVG charts with drawn lines, both arms
            String pageText = Files.readString(page);
            assertTrue(pageText.contains("<svg") && pageText.contains("<polyline"), page + " has no chart");
            assertTrue(pageText.contains("canary bbr1") && pageText.contains("default stock"), page + " lacks an arm");
            assertTrue(Files.size(out.resolve("bbr1.jfr")) > 0, "no JFR recording of the BBR run");
            System.out.printf("[it] demo --quick: stock %.2f Mbit/s, bbr1 %.2f Mbit/s%n", stock, bbr);
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void withoutTheBuildTreeItSaysWhatToRun() throws Exception {
        Path dir = work("demo-no-tree");
        Path lonely = dir.resolve("elsewhere/tools/target/ccagent-demo.jar");
        Files.createDirectories(lonely.getParent());
        Files.copy(demoJar(), lonely, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        try (ForkedJvm demo = ForkedJvm.builder("demo-no-tree", "dev.ccagent.it.demo.DemoLauncher")
                .classPath(lonely.toString())
                .dir(dir)
                .args("--quick")
                .start()) {
            int exit = demo.waitFor(Duration.ofSeconds(50));
            assertEquals(1, exit, demo.describe());
            assertTrue(demo.stderr().contains("run mvn -B -q package -DskipTests"), demo.describe());
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void theProductionJarRunsNoDemoAndSaysWhereItIs() throws Exception {
        Path dir = work("demo-production-jar");
        try (ForkedJvm demo = ForkedJvm.builder("demo-in-agent", "dev.ccagent.agent.CcAgent")
                .classPath(agentJar().toString())
                .dir(dir)
                .args("demo", "--quick")
                .start()) {
            int exit = demo.waitFor(Duration.ofSeconds(50));
            assertEquals(2, exit, demo.describe());
            assertTrue(demo.stderr().contains("java -jar tools/target/ccagent-demo.jar"), demo.describe());
            assertTrue(demo.stdout().isBlank(), "the production jar ran something: " + demo.describe());
        }
    }
}
