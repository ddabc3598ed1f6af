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
 * Fail open: 16 kinds of bad argument; a server started with them logs exactly one agent line per
 * problem, an ERROR naming it, installs nothing, and serves an intact transfer on kwik's stock
 * controller. The servers run side by side; one client visits each in turn.
 *
 * <p>These servers run unpatched kwik, whose stream-send race (KwikStreamStallTest) freezes about one
 * loopback transfer in two for good; a transfer that stalls is retried on a new connection and the
 * retries are reported ({@link UnpatchedKwik}: the measured rate and the odds). That is kwik's bug, not
 * what this test is about.
 */
class KwikBadArgumentsTest {

    /**
     * Agent arguments → one fragment per problem in them; each must appear in exactly one of the
     * server's agent lines, and there must be no other agent line. Several problems share a server
     * (the parser reports each on its own) to keep the JVM count down on a 2-core machine.
     */
    static Map<String, List<String>> cases() {
        Map<String, List<String>> c = new LinkedHashMap<>();
        c.put("colour=blue;cc=vegas;canary=cubic30;log=loud", List.of(
                "unknown key 'colour'",                                  // unknown key
                "cc=vegas: unknown congestion control algorithm 'vegas'", // unknown algorithm
                "canary=cubic30: expected ALGO:PCT%",                      // bad canary syntax
                "log=loud: expected off|error|warn|info|debug"));         // bad log level
        c.put("opt.newreno.beta=abc;opt.cubic.no-such-option=1;opt.vegas.alpha=2;jfr.max-size=1KiB", List.of(
                "opt.newreno: newreno: option beta: 'abc'",               // bad option value
                "unknown option no-such-option",                         // unknown option key
                "opt.vegas.alpha=2: unknown congestion control algorithm 'vegas'", // option of an unknown algorithm
                "jfr.max-size=1KiB: at least 1MiB"));                     // recording bound too small
        c.put("config=/nonexistent/ccagent.properties;cc=cubic;cubic;fix.kwik-stream-stall=maybe;targets=quiche", List.of(
                "config=/nonexistent/ccagent.properties: no such file",   // missing config file
                "argument 'cubic' is not KEY=VALUE",                     // entry without '='
                "fix.kwik-stream-stall=maybe: expected on|off",           // bad on/off
                "unknown target 'quiche'"));                              // unknown target library
        c.put("cc=cubic;cc=newreno;canary=cubic:150%;opt.stock.x=1", List.of(
                "key cc is given twice",                                  // duplicate key
                "canary=cubic:150%: share 150% must be in (0, 100]",      // canary share over 100%
                "opt.stock.x=1: the stock algorithm takes no options"));  // options for stock
        c.put("cc=newreno;canary=cubic:60%,reno-hbdp:50%", List.of(
                "shares add up to 110.0%, more than 100%"));              // canary shares over 100% in total
        return c;
    }

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void eachProblemIsOneLineAndTheServerStaysStock() throws Exception {
        Path dir = KwikIt.workDir("bad-arguments");
        Map<String, List<String>> cases = cases();
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
            KwikIt.ClientRun run = KwikIt.runClient(dir, "client", null, Duration.ofSeconds(240),
                    UnpatchedKwik.overLoopback("--port", ports.toString(), "--connections", Integer.toString(servers.size()),
                            "--mode", "down", "--bytes", "100000", "--seed", "5"));
            assertTrue(run.allOk(servers.size()), "transfers not all intact:\n" + run.describe);

            long retries = run.stdout.lines().filter(l -> l.startsWith("RETRY ")).count();
            System.out.println("[it] bad arguments: " + servers.size() + " stock servers, " + retries
                    + " transfer(s) retried after a kwik stream stall");
            i = 0;
            int kinds = 0;
            for (Map.Entry<String, List<String>> c : cases.entrySet()) {
                KwikIt.Server s = servers.get(i++);
                String stdout = s.jvm.stdout();
                assertTrue(stdout.contains("SERVED mode=down bytes=100000 "), c.getKey() + ": nothing served\n" + s.jvm.describe());
                List<String> lines = s.agentLines();
                assertEquals(c.getValue().size(), lines.size(), c.getKey() + ": one agent line per problem expected: " + lines);
                for (String fragment : c.getValue()) {
                    long matching = lines.stream().filter(l -> l.contains(fragment)).count();
                    assertEquals(1, matching, c.getKey() + ": '" + fragment + "' must be named by exactly one line: " + lines);
                    kinds++;
                }
                for (String line : lines) {
                    assertTrue(line.contains(" ERROR bad argument: ") && line.endsWith("congestion control stays stock"),
                            c.getKey() + ": unexpected line: " + line);
                    System.out.println("[it] " + c.getKey() + " -> " + line.substring(line.indexOf("[ccagent]")));
                }
                assertTrue(KwikIt.connectionLines(s.jvm.stderr()).isEmpty(), "nothing may be injected");
            }
            assertTrue(kinds >= 10, "at least 10 kinds of problem");
        } finally {
            for (ForkedJvm jvm : launched) {
                jvm.close();
            }
        }
    }
}
