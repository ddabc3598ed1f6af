package dev.ccagent.it.netty;

import dev.ccagent.it.Acceptance;
import dev.ccagent.jfr.EventNames;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.File;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * No false alarm from a busy loop (issue 33 item 7, its first case): one Netty event loop serves 100 idle
 * QUIC connections and a TCP echo server kept busy by four clients for 60 s ({@code NettyBusyLoopApp}), under
 * NIO and under epoll (4.2.17, whose epoll does not spin). The loop burns half a core or more with its QUIC
 * connections still and their tasks on time, so the CPU spin monitor's poll check runs every 2 s: it must find
 * the loop busy in its handlers, not spinning in its poll. Evidence: the JDK's recording parser (no
 * {@code CpuSpin} event) and the loop's CPU as the JVM counts it (the case the rule judges really arose).
 */
@Acceptance("no spin alarm over 60 s of a loop busy with TCP beside 100 idle QUIC connections")
class NettyBusyLoopNoFalseAlarmTest {

    @ParameterizedTest
    @ValueSource(strings = {"nio", "epoll"})
    void aLoopBusyWithTcpBesideOneHundredIdleQuicConnectionsIsNoSpin(String transport) throws Exception {
        Path rec = NettyApp.freshFile("netty-busy-loop-" + transport + ".jfr");
        NettyApp.Run run = NettyApp.runMain("netty-busy-loop-" + transport, "dev.ccagent.it.netty.NettyBusyLoopApp",
                NettyApp.testAppsClassPath() + File.pathSeparator + NettyApp.jars(NettyApp.Version.CURRENT),
                "cc=cubic;log=debug;jfr=" + rec, 240, "keystore=" + NettyApp.keystore(), "transport=" + transport,
                "seconds=60", "idle=100", "tcp-clients=4");
        assertEquals(0, run.exit, run.tail());
        assertTrue(run.out.contains("DONE ok=true") && run.out.contains("QUIC active=100 of 100"), run.tail());
        long loopCpuMs = run.number("CPU loopCpuMs", "loopCpuMs");
        long wallMs = run.number("CPU loopCpuMs", "wallMs");
        // the monitor judges a loop only at half a core or more: below that this run would prove nothing
        assertTrue(loopCpuMs >= wallMs / 2, "the loop was busy: " + loopCpuMs + " ms of CPU in " + wallMs);
        PollChecks checks = PollChecks.of(run.lines("poll check at"), 8); // CpuSpinMonitor.POLL_MIN_AWAKE
        System.out.printf("[it] %s: loop %d ms of CPU in %d ms, %s B echoed, %s%n", transport, loopCpuMs, wallMs,
                run.number("TCP echoedBytes", "echoedBytes"), checks);
        // the poll check ran all along (every 2 s window of the 60 s), so the rule was exercised
        assertTrue(checks.count() >= 20, "poll checks: " + checks.count());
        assertEquals(PollChecks.kernelCountsSleeps() ? checks.count() : 0, checks.byKernel(), checks.toString());
        long spins = RecordingFile.readAllEvents(rec).stream()
                .filter(e -> e.getEventType().getName().equals(EventNames.CPU_SPIN)).count();
        assertEquals(0, spins, "no CpuSpin: " + run.lines("CPU spin on"));
    }
}
