package dev.ccagent.it.kwik;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code canary=cubic:30%} over 30 real connections: every connection's arm is the one
 * {@code AlgorithmSelector} (loaded from the agent jar) predicts from its connection id, the observed split lies within 3σ of
 * the binomial expectation, and every transfer is intact.
 */
class KwikCanaryTest {

    static final int CONNECTIONS = 30;
    static final String ARGS = "cc=newreno;canary=cubic:30%;log=debug;fix.kwik-stream-stall=on";

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void splitFollowsTheConnectionIdHash() throws Exception {
        Path dir = KwikIt.workDir("canary");
        try (KwikIt.Server server = KwikIt.startServer(dir, "server", ARGS)) {
            KwikIt.ClientRun run = KwikIt.runClient(dir, "client", null, Duration.ofSeconds(180),
                    "--port", Integer.toString(server.port), "--mode", "down", "--bytes", "300000",
                    "--connections", Integer.toString(CONNECTIONS), "--parallel", "3", "--seed", "100");
            assertTrue(run.allOk(CONNECTIONS), "transfers not all intact:\n" + run.describe + server.jvm.describe());

            Set<String> clientIds = run.results.stream().map(m -> m.group(2)).collect(Collectors.toSet());
            assertEquals(CONNECTIONS, clientIds.size(), "distinct connection ids");
            List<Matcher> lines = KwikIt.connectionLines(server.jvm.stderr());
            assertEquals(CONNECTIONS, lines.size(), "one line per connection:\n" + server.jvm.stderr());
            Map<String, Integer> perAlgorithm = new HashMap<>();
            for (Matcher l : lines) {
                String id = l.group(2);
                assertTrue(clientIds.contains(id), "server line for an id no client used: " + l.group());
                String[] predicted = AgentJar.predictArm(ARGS, HexFormat.of().parseHex(id));
                assertEquals(predicted[0], l.group(3), "arm of " + id);
                assertEquals(predicted[1], l.group(4), "algorithm of " + id);
                perAlgorithm.merge(l.group(4), 1, Integer::sum);
            }
            int canary = perAlgorithm.getOrDefault("cubic", 0);
            assertEquals(CONNECTIONS, canary + perAlgorithm.getOrDefault("newreno", 0), perAlgorithm.toString());
            double mean = CONNECTIONS * 0.3;
            double sigma = Math.sqrt(CONNECTIONS * 0.3 * 0.7);
            System.out.printf("[it] canary: %d of %d connections on cubic (expected %.1f ± %.1f)%n", canary, CONNECTIONS,
                    mean, sigma);
            assertTrue(Math.abs(canary - mean) <= 3 * sigma, "split " + perAlgorithm + " outside 3 sigma of 30%");
        }
    }
}
