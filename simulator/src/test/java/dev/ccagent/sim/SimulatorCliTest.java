package dev.ccagent.sim;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SimulatorCliTest {

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) {
        return SimulatorCli.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    private String out() {
        return out.toString(StandardCharsets.UTF_8);
    }

    private String err() {
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void jsonHasEveryDocumentedField() {
        int rc = run("--cc", "newreno", "--rate", "50mbit", "--rtt", "50ms", "--buffer", "1bdp", "--loss", "0.01",
                "--bytes", "2MiB", "--seed", "1", "--json");
        assertEquals(0, rc, err());
        String json = out().strip();
        assertTrue(json.startsWith("{\"flows\":[{") && json.endsWith("}"), json);
        for (String field : List.of("cc", "bytes", "completionSeconds", "goodputBps", "packetsSent", "packetsLost",
                "lossRate", "srttMs", "minRttMs", "bandwidthEstimateBps", "finalState", "startupExitSeconds",
                "queueDelayP50Ms", "queueDelayP95Ms", "linkUtilization", "jainFairness")) {
            assertTrue(json.contains("\"" + field + "\":"), "missing " + field + " in " + json);
        }
        assertTrue(json.contains("\"bandwidthEstimateBps\":null"), "not applicable to newreno: null");
        assertTrue(json.contains("\"jainFairness\":null"), "one flow: null");
        assertTrue(json.contains("\"bytes\":2097152"), json);
    }

    @Test
    void tableAndCompare() {
        assertEquals(0, run("--cc", "newreno", "--compare", "--loss", "0.01", "--bytes", "1MiB"), err());
        assertTrue(out().contains("newreno"), out());
        assertTrue(out().contains("1.00x"), out());
        assertTrue(out().contains("loss-based ceiling"), out());
    }

    @Test
    void badFlagsGiveOneLineAndStatusTwo() {
        String[][] bad = {
            {"--cc", "nope", "--bytes", "1MiB"},
            {"--cc", "newreno"},
            {"--bytes", "1MiB"},
            {"--cc", "newreno", "--bytes", "1MiB", "--loss", "1.5"},
            {"--cc", "newreno", "--bytes", "1MiB", "--rate", "fast"},
            {"--cc", "newreno", "--bytes", "1MiB", "--frobnicate", "1"},
            {"--cc", "newreno", "--bytes", "1MiB", "--cc-option", "quantum=2"},
            {"--cc", "newreno", "--bytes", "1MiB", "--cc-option", "quantum-ratio=7"},
            {"--cc", "newreno", "--bytes", "1MiB", "--buffer", "-1bdp"},
            {"--cc", "newreno", "--bytes", "1MiB", "--rate-change", "20s"},
            {"--cc", "newreno", "--bytes"},
        };
        for (String[] args : bad) {
            out.reset();
            err.reset();
            assertEquals(2, run(args), String.join(" ", args));
            String e = err().strip();
            assertTrue(e.startsWith("ccsim: "), e);
            assertEquals(1, e.lines().count(), "one line: " + e);
            assertEquals("", out());
        }
    }

    @Test
    void traceFileHasATimeSeries(@TempDir Path dir) throws Exception {
        Path trace = dir.resolve("t.csv");
        assertEquals(0, run("--cc", "newreno", "--bytes", "2MiB", "--trace", trace.toString()), err());
        List<String> lines = Files.readAllLines(trace);
        assertTrue(lines.get(0).startsWith("run,time_s,flow,cc,mode,cwnd_bytes"), lines.get(0));
        assertTrue(lines.size() > 20, "rows: " + lines.size());
        assertTrue(lines.get(5).contains(",newreno,"), lines.get(5));
    }

    @Test
    void helpPrintsUsage() {
        assertEquals(0, run("--help"));
        assertTrue(out().contains("--ack-aggregation"));
    }
}
