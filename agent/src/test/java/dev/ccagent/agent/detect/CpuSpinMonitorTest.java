package dev.ccagent.agent.detect;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.management.ThreadMXBean;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The monitor's rules on scripted threads and connections (the clock, each thread's CPU time and each
 * connection's counters are the test's): bulk transfers and busy shared loops are no spin; CPU
 * without progress is, on a dedicated thread and on a shared one when one connection explains it;
 * an episode ends with progress or with the connection.
 */
class CpuSpinMonitorTest {

    static final long MS = 1_000_000L;

    final Map<Long, Long> cpu = new HashMap<>();
    final List<CpuSpinMonitor.Reading> readings = new ArrayList<>();
    final CpuSpinMonitor.Source source = action -> readings.forEach(action);
    final ThreadMXBean bean = (ThreadMXBean) Proxy.newProxyInstance(getClass().getClassLoader(),
            new Class<?>[] {ThreadMXBean.class}, (proxy, method, args) -> {
                if (method.getName().equals("getThreadCpuTime")) {
                    return cpu.getOrDefault((Long) args[0], -1L);
                }
                return null; // getThreadInfo: no stack, not RUNNABLE
            });
    final CpuSpinMonitor monitor = new CpuSpinMonitor(bean, () -> null);
    long now = 1_000_000_000L;

    CpuSpinMonitorTest() {
        CpuSpinMonitor.addSource(source);
    }

    @AfterEach
    void remove() {
        monitor.close("detach");
        readings.clear();
    }

    static CpuSpinMonitor.Reading conn(Object key, long thread, boolean shared) {
        CpuSpinMonitor.Reading r = new CpuSpinMonitor.Reading();
        r.key = key;
        r.library = "test";
        r.connectionId = key.toString();
        r.threadId = thread;
        r.sharedThread = shared;
        return r;
    }

    /** Advances 250 ms: thread CPU by {@code share}, then samples. */
    void period(long thread, double share) {
        now += 250 * MS;
        cpu.merge(thread, (long) (share * 250 * MS), Long::sum);
        monitor.tick(now);
    }

    @Test
    void cpuBoundBulkTransferIsNoSpin() {
        CpuSpinMonitor.Reading r = conn("bulk", 1, false);
        r.appBytes = 0;
        readings.add(r);
        cpu.put(1L, 0L);
        for (int i = 0; i < 40; i++) {
            r.appBytes += 5_000_000; // 20 MB/s at a full core
            period(1, 1.0);
        }
        assertEquals(0, CpuSpinMonitor.episodes());
    }

    @Test
    void cpuWithoutProgressIsASpinThatEndsWithProgress() {
        CpuSpinMonitor.Reading r = conn("stuck", 2, false);
        r.appBytes = 1000;
        readings.add(r);
        cpu.put(2L, 0L);
        for (int i = 0; i < 7; i++) {
            period(2, 1.0);
        }
        assertEquals(0, CpuSpinMonitor.episodes(), "not before a full 2 s window");
        for (int i = 0; i < 3; i++) {
            period(2, 1.0);
        }
        assertEquals(1, CpuSpinMonitor.episodes());
        assertEquals(1, CpuSpinMonitor.ongoing());
        for (int i = 0; i < 8; i++) {
            period(2, 1.0);
        }
        assertEquals(1, CpuSpinMonitor.episodes(), "one episode, however long");
        for (int i = 0; i < 4; i++) {
            r.appBytes += 200_000;
            period(2, 1.0);
        }
        assertEquals(0, CpuSpinMonitor.ongoing(), "progress ended it");
    }

    @Test
    void halfACoreIsTheBar() {
        CpuSpinMonitor.Reading r = conn("light", 3, false);
        r.appBytes = 0;
        readings.add(r);
        cpu.put(3L, 0L);
        for (int i = 0; i < 20; i++) {
            period(3, 0.3);
        }
        assertEquals(0, CpuSpinMonitor.episodes());
    }

    @Test
    void aBusySharedLoopWithHealthyConnectionsIsNoSpinAndAStuckConnectionIsBlamed() {
        List<CpuSpinMonitor.Reading> mine = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            CpuSpinMonitor.Reading r = conn("c" + i, 4, true);
            r.datagrams = 0;
            r.loopsEntered = 0;
            r.loopsExited = 0;
            mine.add(r);
        }
        readings.addAll(mine);
        cpu.put(4L, 0L);
        for (int i = 0; i < 20; i++) {
            for (CpuSpinMonitor.Reading r : mine) {
                r.datagrams += 40;
                r.loopsEntered += 10;
                r.loopsExited += 10;
            }
            period(4, 1.0);
        }
        assertEquals(0, CpuSpinMonitor.episodes(), "800 datagrams per CPU second is progress");
        // now connection c7 enters connectionSend and never leaves; nothing moves anywhere
        CpuSpinMonitor.Reading stuck = mine.get(7);
        stuck.loopsEntered++;
        for (int i = 0; i < 12; i++) {
            period(4, 1.0);
        }
        assertEquals(1, CpuSpinMonitor.episodes());
    }

    @Test
    void aBusySharedThreadThatNoConnectionExplainsIsNotBlamedOnQuic() {
        CpuSpinMonitor.Reading a = conn("idle-a", 5, true);
        CpuSpinMonitor.Reading b = conn("idle-b", 5, true);
        for (CpuSpinMonitor.Reading r : List.of(a, b)) {
            r.datagrams = 0;
            r.loopsEntered = 0;
            r.loopsExited = 0;
        }
        readings.add(a);
        readings.add(b);
        cpu.put(5L, 0L);
        for (int i = 0; i < 20; i++) {
            period(5, 1.0); // the loop burns a core on something else (no QUIC send-loop activity)
        }
        assertEquals(0, CpuSpinMonitor.episodes());
    }

    @Test
    void anEpisodeEndsWhenTheConnectionCloses() {
        CpuSpinMonitor.Reading r = conn("closing", 6, false);
        r.appBytes = 0;
        readings.add(r);
        cpu.put(6L, 0L);
        for (int i = 0; i < 10; i++) {
            period(6, 1.0);
        }
        assertEquals(1, CpuSpinMonitor.ongoing());
        r.closed = true;
        period(6, 1.0);
        assertEquals(0, CpuSpinMonitor.ongoing());
    }
}
