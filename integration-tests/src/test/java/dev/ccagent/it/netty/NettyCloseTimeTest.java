package dev.ccagent.it.netty;

import dev.ccagent.it.Acceptance;
import dev.ccagent.jfr.EventFields;
import dev.ccagent.jfr.EventNames;
import dev.ccagent.report.RecordingReport;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What closing a connection costs Netty's event loop with {@code guard=on} (issue 35, item 3): 1,000 real
 * QUIC connections (after 100 to warm up) each download 1 kB from a Netty QUIC server and close; the
 * application times every server connection's close on its event loop with its own close-future listeners
 * ({@link NettyBulkApp}'s {@code close-times}: one added at registration, before the agent can add its own,
 * and one that Netty's promise runs after all others). Four forked JVMs, one after the other, the same
 * transfers: no agent, the agent with a 50% canary and {@code guard=off}, the same with {@code guard=on}
 * (these two with the agent's recording, {@code jfr=}, whose close summaries are written on the loop), and
 * {@code guard=on} without a recording.
 *
 * <p>Evidence from outside the agent: the brackets are the application's clock readings; the guard-on run's
 * recording (JDK parser) shows each server connection's close summary, which the agent writes from its
 * close listener, inside a {@code CloseBracket} of the application on the same thread, so the bracket holds
 * the agent's close work; every download is checked by CRC. The figures go to BENCHMARKS.md ("What a close
 * costs Netty's event loop"), the raw times to {@code target/netty-it/close-times-*.csv}.
 */
@Acceptance("the per-close time on Netty's event loop over 1,000 connections per variant")
class NettyCloseTimeTest {

    static final int WARMUP = 100;
    static final int MEASURED = 1_000;
    /**
     * The bound on the guard-on runs' p99, at the claim "the loop pays nothing a server would notice": 1 ms,
     * about 15 times the largest p99 measured (45.9-65.8 µs in 3 runs at load 1.8-2.4, BENCHMARKS.md); below
     * 1e-4 a run stated from that margin on a quiet machine. A close that took this long once in 100 would
     * delay every connection on the loop by as much.
     */
    static final long P99_BOUND_NANOS = 1_000_000;
    /**
     * The bound on the guard-on runs' slowest close: 100 ms. Measured 0.34-3.9 ms, in every variant, the
     * agent-less one included (not a GC: no collection in the recording overlaps it; the loop's thread
     * preempted on 2 cores): 25 times the largest. A close path that blocked (a lock held by the agent's
     * evaluation thread, file I/O) would show here.
     */
    static final long MAX_BOUND_NANOS = 100_000_000;

    @Test
    @Timeout(600)
    void aCloseCostsTheEventLoopMicroseconds() throws Exception {
        String cc = "netty.cc=bbr;netty.canary=reno:50%";
        List<Variant> variants = List.of(new Variant("no agent", null, false),
                new Variant("agent, guard off", cc, true),
                new Variant("agent, guard on", cc + ";guard=on", true),
                new Variant("agent, guard on, no recording", cc + ";guard=on", false));
        Map<Variant, Measured> times = new LinkedHashMap<>();
        Path guardOnRecording = null;
        for (Variant v : variants) {
            String slug = v.name.replaceAll("[^a-z]+", "-");
            Path csv = NettyApp.WORK.resolve("close-times-" + slug + ".csv").toAbsolutePath();
            Path rec = NettyApp.WORK.resolve("close-times-" + slug + ".jfr").toAbsolutePath();
            Files.deleteIfExists(csv);
            Files.deleteIfExists(rec);
            String args = v.recording ? v.agentArgs + ";jfr=" + rec : v.agentArgs;
            NettyApp.Run r = NettyApp.run("close-times-" + slug, NettyApp.Version.CURRENT, args, 300,
                    "connections=" + (WARMUP + MEASURED), "bytes=1024", "close-times=" + csv);
            assertEquals(0, r.exit, v.name + ": " + r.tail());
            assertTrue(r.out.contains("DONE ok=true"), v.name + ": " + r.tail());
            assertEquals(WARMUP + MEASURED, r.lines("crcOk=true").size(), v.name + ": " + r.tail());
            assertEquals(1, r.lines("CLOSES timed=" + (WARMUP + MEASURED) + " of " + (WARMUP + MEASURED)
                    + " outsideLoop=0").size(), v.name + ": " + r.tail());
            times.put(v, Measured.of(read(csv)));
            if (v.recording && v.agentArgs.contains("guard=on")) {
                guardOnRecording = rec;
            }
        }

        int inside = agentCloseWorkInsideBrackets(guardOnRecording);
        assertEquals(WARMUP + MEASURED, inside, "server close summaries inside the application's close brackets");

        StringBuilder table = new StringBuilder();
        table.append(String.format(Locale.ROOT, "[it] netty close times (µs; %d measured after %d warm-up closes, per variant)%n",
                MEASURED, WARMUP));
        table.append("| variant | p50 | p90 | p99 | max | warm-up max |\n|---|---|---|---|---|---|\n");
        for (Map.Entry<Variant, Measured> e : times.entrySet()) {
            Measured m = e.getValue();
            table.append(String.format(Locale.ROOT, "| %s | %.1f | %.1f | %.1f | %.1f | %.1f |%n", e.getKey().name,
                    m.percentile(50) / 1e3, m.percentile(90) / 1e3, m.percentile(99) / 1e3, m.max() / 1e3,
                    m.warmupMax / 1e3));
        }
        System.out.println(table);
        for (Map.Entry<Variant, Measured> e : times.entrySet()) {
            if (e.getKey().agentArgs == null || !e.getKey().agentArgs.contains("guard=on")) {
                continue;
            }
            Measured on = e.getValue();
            String name = e.getKey().name;
            assertTrue(on.percentile(99) <= P99_BOUND_NANOS, name + ": p99 per close " + on.percentile(99) / 1e3
                    + " µs above " + P99_BOUND_NANOS / 1e3 + " µs\n" + table);
            assertTrue(on.max() <= MAX_BOUND_NANOS, name + ": slowest close " + on.max() / 1e6 + " ms above "
                    + MAX_BOUND_NANOS / 1e6 + " ms\n" + table);
        }
    }

    /** One forked run: its name, the agent's arguments (null: no agent), and whether the agent records. */
    record Variant(String name, String agentArgs, boolean recording) {
    }

    /** The close times in the order the closes ran. */
    static long[] read(Path csv) throws Exception {
        return Files.readAllLines(csv).stream().filter(l -> !l.startsWith("#"))
                .mapToLong(l -> Long.parseLong(l.split(",")[1])).toArray();
    }

    /** One variant's close times: the measured ones sorted, and the slowest of the warm-up. */
    record Measured(long[] sorted, long warmupMax) {
        static Measured of(long[] inOrder) {
            long[] m = Arrays.copyOfRange(inOrder, WARMUP, inOrder.length);
            Arrays.sort(m);
            return new Measured(m, Arrays.stream(inOrder, 0, WARMUP).max().getAsLong());
        }

        /** Nearest rank, as the report computes its percentiles. */
        long percentile(double p) {
            return RecordingReport.percentile(sorted, p);
        }

        long max() {
            return sorted[sorted.length - 1];
        }
    }

    /**
     * How many of the server connections' close summaries (the agent writes them in its close listener) lie
     * inside one of the application's close brackets on the same thread. Every server close summary must.
     * Each must also count at least the 1,024-byte body its connection served (the client checked it by its
     * CRC): quiche's count read as the connection closes. Until 2026-12-06 a connection shorter than
     * {@code netty.stats.period} (1 s by default; these last milliseconds) was never sampled, and its summary
     * counted 0 bytes sent.
     */
    static int agentCloseWorkInsideBrackets(Path rec) throws Exception {
        List<RecordedEvent> brackets = new ArrayList<>();
        List<RecordedEvent> summaries = new ArrayList<>();
        for (RecordedEvent e : RecordingFile.readAllEvents(rec)) {
            String name = e.getEventType().getName();
            if (name.equals("dev.ccagent.it.CloseBracket")) {
                brackets.add(e);
            } else if (name.equals(EventNames.CONNECTION_SUMMARY) && "server".equals(e.getString(EventFields.ROLE))
                    && "close".equals(e.getString(EventFields.TRIGGER))) {
                summaries.add(e);
            }
        }
        assertEquals(WARMUP + MEASURED, brackets.size(), "close brackets in the recording");
        List<String> uncounted = summaries.stream().filter(s -> s.getLong(EventFields.BYTES_SENT) < 1024)
                .map(s -> s.getString(EventFields.CONNECTION_ID) + " " + s.getLong(EventFields.BYTES_SENT)).toList();
        assertEquals(List.of(), uncounted, "server close summaries that count less than the 1,024 bytes served");
        int inside = 0;
        List<String> outside = new ArrayList<>();
        for (RecordedEvent s : summaries) {
            boolean found = false;
            for (RecordedEvent b : brackets) {
                if (b.getThread() != null && s.getThread() != null
                        && b.getThread().getJavaThreadId() == s.getThread().getJavaThreadId()
                        && !s.getStartTime().isBefore(b.getStartTime()) && !s.getEndTime().isAfter(b.getEndTime())) {
                    found = true;
                    break;
                }
            }
            if (found) {
                inside++;
            } else if (outside.size() < 5) {
                outside.add(s.getString(EventFields.CONNECTION_ID) + " at " + s.getStartTime() + " on "
                        + (s.getThread() != null ? s.getThread().getJavaName() : "?"));
            }
        }
        assertTrue(outside.isEmpty(), "server close summaries outside every close bracket (the bracket would not "
                + "hold the agent's close work): " + outside + " of " + summaries.size());
        return inside;
    }
}
