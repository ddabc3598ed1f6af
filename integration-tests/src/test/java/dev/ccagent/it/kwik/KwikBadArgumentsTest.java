package dev.ccagent.it.kwik;

import dev.ccagent.it.ForkedJvm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Fail open: for each kind of bad argument a server starts with it, logs exactly one agent line,
 * an ERROR naming the problem, installs nothing, and serves an intact transfer on kwik's stock
 * controller. The servers run side by side; one client visits each in turn.
 *
 * <p>These servers run unpatched kwik, whose stream-send race (KwikStreamStallTest) can freeze a
 * transfer of any size for good on a busy machine; a transfer that stalls (no progress for 5 s) is
 * retried on a new connection, up to twice, and the retries are reported. That is kwik's bug, not
 * what this test is about.
 */
class KwikBadArgumentsTest {

    /** Agent arguments → a fragment the one log line must contain. */
    static Map<String, String> cases() {
        Map<String, String> c = new LinkedHashMap<>();
        c.put("colour=blue", "unknown key 'colour'");
        c.put("cc=vegas", "cc=vegas:");
        c.put("canary=cubic30", "canary=cubic30: expected ALGO:PCT%");
        c.put("canary=cubic:150%", "canary=cubic:150%: share 150% must be in (0, 100]");
        c.put("cc=newreno;canary=cubic:60%,reno-hbdp:50%", "more than 100%");
        c.put("opt.newreno.beta=abc", "opt.newreno:");
        c.put("opt.cubic.no-such-option=1", "no-such-option");
        c.put("opt.vegas.alpha=2", "opt.vegas.alpha=2:");
        c.put("config=/nonexistent/ccagent.properties", "config=/nonexistent/ccagent.properties: no such file");
        c.put("cc=cubic;cubic", "argument 'cubic' is not KEY=VALUE");
        c.put("cc=cubic;cc=newreno", "key cc is given twice");
        c.put("cc=cubic;log=loud", "log=loud: expected off|error|warn|info|debug");
        c.put("cc=cubic;jfr.max-size=1KiB", "jfr.max-size=1KiB: at least 1MiB");
        c.put("cc=cubic;fix.kwik-stream-stall=maybe", "fix.kwik-stream-stall=maybe: expected on|off");
        c.put("cc=cubic;targets=quiche", "unknown target 'quiche'");
        c.put("opt.stock.x=1", "the stock algorithm takes no options");
        return c;
    }

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void eachProblemIsOneLineAndTheServerStaysStock() throws Exception {
        Path dir = KwikIt.workDir("bad-arguments");
        Map<String, String> cases = cases();
        List<ForkedJvm> launched = new ArrayList<>();
        List<KwikIt.Server> servers = new ArrayList<>();
        try {
            int i = 0;
            for (String args : cases.keySet()) {
                launched.add(KwikIt.launchServer(dir, "server-" + i++, args));
            }
            for (ForkedJvm jvm : launched) {
                servers.add(KwikIt.awaitPort(jvm));
            }
            StringBuilder ports = new StringBuilder();
            for (KwikIt.Server s : servers) {
                ports.append(ports.length() == 0 ? "" : ",").append(s.port);
            }
            KwikIt.ClientRun run = KwikIt.runClient(dir, "client", null, Duration.ofSeconds(180),
                    "--port", ports.toString(), "--connections", Integer.toString(servers.size()),
                    "--mode", "down", "--bytes", "100000", "--seed", "5", "--stall-seconds", "5", "--stall-retries", "2");
            assertTrue(run.allOk(servers.size()), "transfers not all intact:\n" + run.describe);

            long retries = run.stdout.lines().filter(l -> l.startsWith("RETRY ")).count();
            System.out.println("[it] bad arguments: " + servers.size() + " stock servers, " + retries
                    + " transfer(s) retried after a kwik stream stall");
            i = 0;
            for (Map.Entry<String, String> c : cases.entrySet()) {
                KwikIt.Server s = servers.get(i++);
                String stdout = s.jvm.stdout();
                assertTrue(stdout.contains("SERVED mode=down bytes=100000 "), c.getKey() + ": nothing served\n" + s.jvm.describe());
                List<String> lines = s.agentLines();
                assertEquals(1, lines.size(), c.getKey() + ": exactly one agent line expected: " + lines);
                String line = lines.get(0);
                assertTrue(line.contains(" ERROR bad argument: ") && line.contains(c.getValue())
                                && line.endsWith("congestion control stays stock"),
                        c.getKey() + ": unexpected line: " + line);
                System.out.println("[it] " + c.getKey() + " -> " + line.substring(line.indexOf("[ccagent]")));
            }
        } finally {
            for (ForkedJvm jvm : launched) {
                jvm.close();
            }
        }
    }
}
