package dev.ccagent.agent.detect;

import dev.ccagent.jfr.EventFields;
import dev.ccagent.jfr.EventNames;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.management.ThreadMXBean;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
    /** {@link #conn}, read from the next period on, its thread's CPU counted from 0. */
    CpuSpinMonitor.Reading watched(Object key, long thread, boolean shared) {
        CpuSpinMonitor.Reading r = conn(key, thread, shared);
        readings.add(r);
        cpu.put(thread, 0L);
        return r;
    }

    /** A connection of its own thread (not shared) watched with {@code appBytes} moved so far. */
    CpuSpinMonitor.Reading watched(Object key, long thread, long appBytes) {
        CpuSpinMonitor.Reading r = watched(key, thread, false);
        r.appBytes = appBytes;
        return r;
    }

    /** {@code n} periods of {@link #period}. */
    void periods(int n, long thread, double share) {
        for (int i = 0; i < n; i++) {
            period(thread, share);
        }
    }

    void period(long thread, double share) {
        now += 250 * MS;
        cpu.merge(thread, (long) (share * 250 * MS), Long::sum);
        monitor.tick(now);
    }

    @Test
    void cpuBoundBulkTransferIsNoSpin() {
        CpuSpinMonitor.Reading r = watched("bulk", 1, 0);
        for (int i = 0; i < 40; i++) {
            r.appBytes += 5_000_000; // 20 MB/s at a full core
            period(1, 1.0);
        }
        assertEquals(0, CpuSpinMonitor.episodes());
    }

    @Test
    void cpuWithoutProgressIsASpinThatEndsWithProgress() {
        CpuSpinMonitor.Reading r = watched("stuck", 2, 1000);
        periods(7, 2, 1.0);
        assertEquals(0, CpuSpinMonitor.episodes(), "not before a full 2 s window");
        periods(3, 2, 1.0);
        assertEquals(1, CpuSpinMonitor.episodes());
        assertEquals(1, CpuSpinMonitor.ongoing());
        periods(8, 2, 1.0);
        assertEquals(1, CpuSpinMonitor.episodes(), "one episode, however long");
        for (int i = 0; i < 4; i++) {
            r.appBytes += 200_000;
            period(2, 1.0);
        }
        assertEquals(0, CpuSpinMonitor.ongoing(), "progress ended it");
    }

    /** An episode on a connection with an arm is the guard's evidence: counted once on that arm. */
    @Test
    void anEpisodeIsCountedOnTheConnectionsArm() {
        dev.ccagent.agent.measure.ArmStats arm = dev.ccagent.agent.measure.ArmStats.of("test", "canary", "spin-arm");
        long before = arm.getAlarms();
        CpuSpinMonitor.Reading r = watched("armed", 7, 1000);
        r.arm = arm;
        periods(20, 7, 1.0);
        assertEquals(1, CpuSpinMonitor.ongoing());
        assertEquals(before + 1, arm.getAlarms(), "one episode, one count on the arm");
    }

    @Test
    void anEpisodeIsRecordedFromItsDetectionWhileItLastsAndAtItsEnd(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        java.nio.file.Path file = dir.resolve("spin.jfr");
        List<jdk.jfr.consumer.RecordedEvent> atDetection;
        List<jdk.jfr.consumer.RecordedEvent> all;
        try (jdk.jfr.Recording rec = TestRecordings.of(EventNames.CPU_SPIN)) {
            CpuSpinMonitor.Reading r = watched("open", 5, 1000);
            periods(10, 5, 1.0);
            assertEquals(1, CpuSpinMonitor.ongoing());
            // a dump taken now, while the spin lasts, holds it
            rec.dump(file);
            atDetection = TestRecordings.read(file, EventNames.CPU_SPIN);
            // the one committed at detection, and the dump's own chunk end (the end-of-chunk hook) may add one
            assertTrue(atDetection.size() >= 1 && atDetection.size() <= 2, "committed at detection: " + atDetection);
            assertTrue(atDetection.stream().allMatch(e -> "ongoing".equals(e.getString(EventFields.ENDED_BY))), atDetection.toString());
            assertEquals(1, CpuSpinMonitor.openEpisodes().size(), "status lists it");
            assertTrue(CpuSpinMonitor.openEpisodes().get(0).contains("connection open"), CpuSpinMonitor.openEpisodes().toString());
            for (int i = 0; i < 42; i++) { // 10.5 s more: two periodic events
                period(5, 1.0);
            }
            for (int i = 0; i < 4; i++) {
                r.appBytes += 200_000;
                period(5, 1.0);
            }
            assertEquals(0, CpuSpinMonitor.ongoing(), "progress ended it");
            assertEquals(List.of(), CpuSpinMonitor.openEpisodes());
            rec.stop();
            rec.dump(file);
            all = TestRecordings.read(file, EventNames.CPU_SPIN);
        }
        long id = atDetection.get(0).getLong(EventFields.EPISODE_ID);
        assertTrue(id > 0);
        // detection, every 5 s while it lasted, the end (and the mid-episode dump's chunk end)
        assertTrue(all.size() >= 4 && all.size() <= 5, all.toString());
        long lastCpu = -1;
        long lastAge = -1;
        for (jdk.jfr.consumer.RecordedEvent e : all) {
            assertEquals(id, e.getLong(EventFields.EPISODE_ID), e.toString());
            assertTrue(e.getLong(EventFields.CPU_TIME) >= lastCpu && e.getLong(EventFields.EPISODE_DURATION) >= lastAge, "figures since the start: " + e);
            lastCpu = e.getLong(EventFields.CPU_TIME);
            lastAge = e.getLong(EventFields.EPISODE_DURATION);
        }
        List<String> endedBy = all.stream().map(e -> e.getString(EventFields.ENDED_BY)).collect(java.util.stream.Collectors.toList());
        assertEquals("progress", endedBy.get(endedBy.size() - 1), endedBy.toString());
        assertTrue(endedBy.subList(0, endedBy.size() - 1).stream().allMatch("ongoing"::equals), endedBy.toString());
        // periodic: events 5 s apart in the episode's time (at 2 s of age, then 7 s and 12 s)
        assertTrue(all.stream().anyMatch(e -> Math.abs(e.getLong(EventFields.EPISODE_DURATION) - 7_000 * MS) <= 260 * MS), all.toString());
        assertTrue(all.stream().anyMatch(e -> Math.abs(e.getLong(EventFields.EPISODE_DURATION) - 12_000 * MS) <= 260 * MS), all.toString());
        // the episode's time: 2 s of window, 10.5 s more, and the progress ticks that ended it (at most 1 s)
        assertTrue(lastAge > 12_500 * MS && lastAge <= 13_500 * MS, "ended with progress: " + lastAge);
    }

    @Test
    void anEpisodeOpenWhenTheRecordingStopsIsCommittedAsOngoing(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        java.nio.file.Path file = dir.resolve("open.jfr");
        try (jdk.jfr.Recording rec = TestRecordings.of(EventNames.CPU_SPIN)) {
            CpuSpinMonitor.Reading r = watched("at-stop", 6, 0);
            for (int i = 0; i < 13; i++) { // detected, then 1 s more: no periodic event yet
                period(6, 1.0);
            }
            assertEquals(1, CpuSpinMonitor.ongoing());
            rec.stop(); // the chunk ends: JFR runs the end-of-chunk hook
            rec.dump(file);
        }
        List<jdk.jfr.consumer.RecordedEvent> all = TestRecordings.read(file, EventNames.CPU_SPIN);
        assertEquals(2, all.size(), "at detection and at the recording's end: " + all);
        assertTrue(all.stream().allMatch(e -> "ongoing".equals(e.getString(EventFields.ENDED_BY))), all.toString());
        long age = all.stream().mapToLong(e -> e.getLong(EventFields.EPISODE_DURATION)).max().orElse(0);
        // established over 2 s (8 periods), then 1 s more: the chunk-end event has the latest tick's figures
        assertEquals(3_000 * MS, age, 10 * MS, "the figures of the latest tick: " + all);
    }

    @Test
    void aSharedLoopParkedInItsSelectorIsNoSpin() throws Exception {
        // the JVM reports a thread parked in Selector.select() as RUNNABLE, as it does Netty's event loops
        try (java.nio.channels.Selector selector = java.nio.channels.Selector.open()) {
            Thread loop = new Thread(() -> {
                try {
                    selector.select();
                } catch (java.io.IOException ignored) {
                    // closed
                }
            }, "test-selector");
            loop.setDaemon(true);
            loop.start();
            while (loop.getState() != Thread.State.RUNNABLE) {
                Thread.sleep(5);
            }
            CpuSpinMonitor.Reading idle = watched("idle-quic", 7, true);
            idle.thread = loop;
            idle.datagrams = 0;
            idle.loopsEntered = 1; // one keep-alive, then nothing
            idle.loopsExited = 1;
            periods(40, 7, 0.06); // 6% of a core of TCP work on the same loop
            assertEquals(0, CpuSpinMonitor.episodes(), "6% of a core on a parked, RUNNABLE event loop is no spin");
            selector.wakeup();
        }
    }

    @Test
    void aBusySharedLoopIsNotBlamedOnAConnectionThatWentIdle() {
        CpuSpinMonitor.Reading quiet = watched("quiet-quic", 8, true);
        quiet.datagrams = 0;
        quiet.loopsEntered = 0;
        quiet.loopsExited = 0;
        period(8, 0.1);
        quiet.loopsEntered = 1; // a keep-alive, then idle
        quiet.loopsExited = 1;
        periods(12, 8, 0.1);
        periods(20, 8, 1.0); // the loop burns a core on something that is not this connection
        assertEquals(0, CpuSpinMonitor.episodes(), "an idle connection's send-loop count falls to zero: nobody to blame");
    }

    @Test
    void halfACoreIsTheBar() {
        CpuSpinMonitor.Reading r = watched("light", 3, 0);
        periods(20, 3, 0.3);
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
        periods(12, 4, 1.0);
        assertEquals(1, CpuSpinMonitor.episodes());
    }

    @Test
    void aBusySharedThreadThatNoConnectionExplainsIsNotBlamedOnQuic() {
        CpuSpinMonitor.Reading a = watched("idle-a", 5, true);
        CpuSpinMonitor.Reading b = watched("idle-b", 5, true);
        for (CpuSpinMonitor.Reading r : List.of(a, b)) {
            r.datagrams = 0;
            r.loopsEntered = 0;
            r.loopsExited = 0;
        }
        periods(20, 5, 1.0); // the loop burns a core on something else (no QUIC send-loop activity)
        assertEquals(0, CpuSpinMonitor.episodes());
    }

    /** Three connections on one shared loop, nothing moving, their tasks' delay as given each period. */
    List<CpuSpinMonitor.Reading> loopOf(long thread, String... ids) {
        List<CpuSpinMonitor.Reading> mine = new ArrayList<>();
        for (String id : ids) {
            CpuSpinMonitor.Reading r = watched(id, thread, true);
            r.datagrams = 0;
            r.loopsEntered = 0;
            r.loopsExited = 0;
            r.taskDelayNanos = 0;
            mine.add(r);
        }
        return mine;
    }

    /** {@code n} periods of a loop burning a core: its connections' tasks wait {@code late} ns more each period (0: on time). */
    void blocked(List<CpuSpinMonitor.Reading> mine, int n, long thread, long late) {
        for (int i = 0; i < n; i++) {
            for (CpuSpinMonitor.Reading r : mine) {
                r.taskDelayNanos = late == 0 ? 0 : r.taskDelayNanos + late;
            }
            period(thread, 1.0);
        }
    }

    @Test
    void aLoopBlockedInOneCallIsALoopLevelSpinThatStarvesEveryConnectionAndBlamesNone(
            @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        dev.ccagent.agent.measure.ArmStats arm = dev.ccagent.agent.measure.ArmStats.of("test", "canary", "loop-arm");
        long before = arm.getAlarms();
        java.nio.file.Path file = dir.resolve("loop.jfr");
        List<jdk.jfr.consumer.RecordedEvent> events;
        try (jdk.jfr.Recording rec = TestRecordings.of(EventNames.CPU_SPIN)) {
            List<CpuSpinMonitor.Reading> mine = loopOf(11, "q1", "q2", "q3");
            mine.forEach(r -> r.arm = arm);
            blocked(mine, 7, 11, 250 * MS); // tasks 1.75 s late, but not yet a full 2 s window
            assertEquals(0, CpuSpinMonitor.episodes(), "not before a full 2 s window");
            blocked(mine, 2, 11, 250 * MS);
            assertEquals(1, CpuSpinMonitor.ongoing());
            String status = CpuSpinMonitor.openEpisodes().get(0);
            assertTrue(status.startsWith("CPU spin on test event loop (blocked, 3 QUIC connections starved)"), status);
            assertEquals(before, arm.getAlarms(), "a loop-level spin is no connection's and no arm's");
            blocked(mine, 4, 11, 250 * MS);
            for (int i = 0; i < 4; i++) { // the loop returns: its tasks run, its connections move again
                for (CpuSpinMonitor.Reading r : mine) {
                    r.taskDelayNanos = 0;
                    r.datagrams += 100;
                }
                period(11, 1.0);
            }
            assertEquals(0, CpuSpinMonitor.ongoing(), "progress ended it");
            rec.stop();
            rec.dump(file);
            events = TestRecordings.read(file, EventNames.CPU_SPIN);
        }
        assertTrue(events.size() >= 2, events.toString());
        for (jdk.jfr.consumer.RecordedEvent e : events) {
            assertEquals("", e.getString(EventFields.CONNECTION_ID), "no connection blamed: " + e);
            assertEquals(3, e.getInt(EventFields.LOOP_CONNECTION_COUNT), e.toString());
            assertEquals(java.util.Set.of("q1", "q2", "q3"),
                    java.util.Set.of(e.getString(EventFields.LOOP_CONNECTIONS).split(",")), e.toString());
        }
        assertTrue(events.get(0).getLong(EventFields.LOOP_TASK_DELAY) >= 1_000 * MS, events.get(0).toString());
        assertEquals("progress", events.get(events.size() - 1).getString(EventFields.ENDED_BY));
    }

    @Test
    void aBusyLoopThatStillRunsItsTasksIsNoSpinEvenWithItsQuicConnectionsIdle() {
        // a loop busy with other traffic (TCP, say) beside idle QUIC connections: their tasks run on time
        List<CpuSpinMonitor.Reading> mine = loopOf(12, "i1", "i2");
        blocked(mine, 20, 12, 0);
        // and late by less than a second (a long task now and then) is no loop-level spin either
        for (int i = 0; i < 20; i++) {
            for (CpuSpinMonitor.Reading r : mine) {
                r.taskDelayNanos = (i % 4) * 250 * MS;
            }
            period(12, 1.0);
        }
        assertEquals(0, CpuSpinMonitor.episodes());
    }

    static final String POLL_FRAMES = "io.netty.channel.epoll.Native.epollWait0\nio.netty.channel.epoll.Native.epollWait:193";
    static final String HANDLER_FRAMES = "io.netty.handler.Busy.channelRead:12\nio.netty.channel.AbstractChannelHandlerContext.invokeChannelRead:444";

    /**
     * A loop's samples in turn as {@code pattern} says, one character each: P in its poll and on a CPU (it ran the
     * window before the sample: 5 ms of CPU, one sample's spacing), p in its poll and off a CPU (parked, or waiting
     * for one), H in a handler on a CPU, h in a handler off a CPU.
     */
    void sampled(long thread, String pattern) {
        java.util.function.Supplier<Character> window = scriptSamples(thread, pattern);
        monitor.onCpuWindow = () -> { // before and after each sample: 2.5 ms each
            if (Character.isUpperCase(window.get())) {
                cpu.merge(thread, 5 * MS / 2, Long::sum);
            }
        };
    }

    /**
     * Scripts the monitor's stack samples of {@code thread} after {@code pattern} (in its poll at p or P, else in a
     * handler); the returned supplier gives the pattern's character of the window now running (the one just before
     * a sample, or just after it).
     */
    java.util.function.Supplier<Character> scriptSamples(long thread, String pattern) {
        int[] i = {0};
        boolean[] afterSample = {false};
        monitor.sampler = ids -> {
            String[] frames = new String[ids.length];
            for (int k = 0; k < ids.length; k++) {
                frames[k] = ids[k] != thread ? "" : Character.toLowerCase(pattern.charAt(i[0] % pattern.length())) == 'p'
                        ? POLL_FRAMES : HANDLER_FRAMES;
            }
            i[0]++;
            afterSample[0] = true;
            return frames;
        };
        return () -> {
            char c = pattern.charAt(Math.max(0, i[0] - (afterSample[0] ? 1 : 0)) % pattern.length());
            afterSample[0] = false;
            return c;
        };
    }

    /** {@link #sampled(long, String)} of 24 samples: {@code running} on a CPU, {@code runningInPoll} of them in the poll, the rest in the poll too when {@code restInPoll}. */
    void sampled(long thread, int running, int runningInPoll, boolean restInPoll) {
        StringBuilder b = new StringBuilder();
        for (int k = 0; k < 24; k++) {
            b.append(k < runningInPoll ? 'P' : k < running ? 'H' : restInPoll ? 'p' : 'h');
        }
        sampled(thread, b.toString());
    }

    @Test
    void aLoopThatBurnsACoreInsideItsPollIsALoopLevelPollingSpin() {
        List<CpuSpinMonitor.Reading> mine = loopOf(14, "p1", "p2");
        mine.forEach(r -> r.pollMethods = List.of("channel.epoll.Native.epollWait0", "sun.nio.ch.EPoll.wait"));
        sampled(14, 24, 21, false); // CVE-2026-42577 on Netty 4.2.12: 220 of 250 samples in epollWait0, on a core
        blocked(mine, 12, 14, 0); // its tasks run on time: one check at 9 periods, a second at 13
        assertEquals(0, CpuSpinMonitor.ongoing(), "one check is not enough");
        blocked(mine, 1, 14, 0);
        assertEquals(1, CpuSpinMonitor.ongoing());
        String status = CpuSpinMonitor.openEpisodes().get(0);
        assertTrue(status.startsWith("CPU spin on test event loop (polling without work, 2 QUIC connections on it)"), status);
        assertTrue(status.contains("Native.epollWait0"), status);
        List<String> alarms = dev.ccagent.agent.runtime.AgentRuntime.alarms();
        String alarm = alarms.get(alarms.size() - 1);
        assertTrue(alarm.contains("returning from its poll without work (21 of the 24 stack samples that found it on a "
                + "CPU were inside it, 21 of 24 in all)"), alarm);
    }

    @Test
    void aLoopSpinningThroughItsPollOnALoadedHostIsFlaggedByTheSamplesThatFindItOnACpu() {
        List<CpuSpinMonitor.Reading> mine = loopOf(17, "c1", "c2");
        mine.forEach(r -> r.pollMethods = List.of("channel.epoll.Native.epollWait0"));
        // the spin gets 0.6 of a core (it waits for a CPU the rest, still inside its poll): 14 samples on a CPU, 12 of
        // them in the poll (0.86)
        sampled(17, 14, 12, true);
        for (int i = 0; i < 16; i++) {
            period(17, 0.6); // its tasks on time
        }
        assertEquals(1, CpuSpinMonitor.ongoing());
        // too little to judge: on a CPU through 7 samples, all in the poll (the rest off a CPU, in the poll too)
        List<CpuSpinMonitor.Reading> few = loopOf(20, "f1", "f2");
        few.forEach(r -> r.pollMethods = List.of("channel.epoll.Native.epollWait0"));
        sampled(20, 7, 7, true);
        for (int i = 0; i < 40; i++) {
            period(20, 0.6);
        }
        assertEquals(1, CpuSpinMonitor.episodes(), "only the first loop's");
    }

    @Test
    void aBusyLoopParkedInItsPollOnALoadedHostIsNoSpin() {
        // the near miss of docs/cpu-spin.md: a busy NIO loop at 0.58 of a core on a loaded host, 22 of 24 samples in
        // its poll; the stack samples alone made that 0.50 of a core burned in the poll, 0.86 of its CPU. Running
        // through only 4 of the samples (2 in its poll, 2 in its handlers), it parked in or was woken from its poll
        // at the others: no CPU burned there to judge
        List<CpuSpinMonitor.Reading> mine = loopOf(18, "k1", "k2");
        mine.forEach(r -> r.pollMethods = List.of("channel.epoll.Native.epollWait0"));
        sampled(18, "PHppppppppppPHpppppppppp");
        for (int i = 0; i < 40; i++) {
            period(18, 0.58); // its tasks on time
        }
        assertEquals(0, CpuSpinMonitor.episodes(), "parked or waiting in its poll");
        // running through 16 of 24 samples, 11 of them in its poll (0.69): still no spin; 12 of them (0.75) is
        sampled(18, 16, 11, true);
        for (int i = 0; i < 40; i++) {
            period(18, 0.6);
        }
        assertEquals(0, CpuSpinMonitor.episodes(), "0.69 of its CPU in its poll");
        sampled(18, 16, 12, true);
        for (int i = 0; i < 8; i++) {
            period(18, 0.6);
        }
        assertEquals(1, CpuSpinMonitor.ongoing());
    }

    /**
     * A loop whose kernel id its source read: at each sample the kernel has it asleep (S) when {@code pattern} says
     * p or h (lower case), running or waiting for a CPU (R) with no sleep counted when P or H; its CPU time meanwhile
     * is {@code cpuShare} of each window whatever the pattern (a loaded host: it waits for a CPU the rest).
     */
    void sampledByTheKernel(List<CpuSpinMonitor.Reading> mine, long thread, String pattern, double cpuShare) {
        mine.forEach(r -> r.kernelThreadId = 4000 + (int) thread);
        long[] sleeps = {0};
        java.util.function.Supplier<Character> window = scriptSamples(thread, pattern);
        monitor.onCpuWindow = () -> {
            cpu.merge(thread, (long) (cpuShare * 2.5 * MS), Long::sum);
            if (Character.isLowerCase(window.get())) {
                sleeps[0]++; // it went to sleep in the window
            }
        };
        monitor.kernelState = tid -> {
            assertEquals(4000 + (int) thread, tid, "the loop's kernel id, as its source read it");
            return 'R'; // at the window's start: the sleep (if any) comes in the window
        };
        monitor.voluntarySwitches = tid -> sleeps[0];
    }

    @Test
    void whereTheKernelCountsSleepsALoopAsleepInItsPollIsNoSpinAndOneAwakeThereIsAtAnyCpuShare() {
        List<CpuSpinMonitor.Reading> mine = loopOf(19, "s1", "s2");
        mine.forEach(r -> r.pollMethods = List.of("channel.epoll.Native.epollWait0"));
        // Reactor Netty's HTTP/1.1 loop on a loaded host: 22 of 24 samples in its poll, asleep at 20 of them; the
        // CPU time alone (a full core in each window) would call every sample on a CPU, 22 of 24 in the poll
        sampledByTheKernel(mine, 19, "PHppppppppppPHpppppppppp", 1.0);
        for (int i = 0; i < 40; i++) {
            period(19, 0.58);
        }
        assertEquals(0, CpuSpinMonitor.episodes(), "asleep in its poll");
        // the spin at a third of a core (waiting for a CPU the rest, never asleep): 15 of 24 awake samples in its
        // poll (0.63) is a spin; 14 (0.58) is not
        sampledByTheKernel(mine, 19, "PPPPPPPPPPPPPPHHHHHHHHHH", 0.3);
        for (int i = 0; i < 40; i++) {
            period(19, 0.6);
        }
        assertEquals(0, CpuSpinMonitor.episodes(), "14 of 24");
        sampledByTheKernel(mine, 19, "PPPPPPPPPPPPPPPHHHHHHHHH", 0.3);
        for (int i = 0; i < 8; i++) {
            period(19, 0.6);
        }
        assertEquals(1, CpuSpinMonitor.ongoing());
        List<String> alarms = dev.ccagent.agent.runtime.AgentRuntime.alarms();
        String alarm = alarms.get(alarms.size() - 1);
        assertTrue(alarm.contains("(15 of the 24 stack samples that found it awake (not asleep just before or after them "
                + "by the kernel's count) were inside it, 15 of 24 in all)"), alarm);
    }

    @Test
    void aLoopBusyInItsHandlersIsNoPollingSpin() {
        List<CpuSpinMonitor.Reading> mine = loopOf(15, "h1", "h2");
        mine.forEach(r -> r.pollMethods = List.of("channel.epoll.Native.epollWait0"));
        sampled(15, "PHHH"); // TCP traffic: mostly in its handlers, now and then in a (returning) poll
        blocked(mine, 40, 15, 0);
        assertEquals(0, CpuSpinMonitor.episodes());
        // a relocated copy's poll ("shaded.io.netty...") matches; another class's method of the same name does not
        assertTrue(CpuSpinMonitor.inPoll("shaded.io.netty.channel.epoll.Native.epollWait0",
                List.of("channel.epoll.Native.epollWait0")));
        assertFalse(CpuSpinMonitor.inPoll("my.xchannel.epoll.Native.epollWait0:3",
                List.of("channel.epoll.Native.epollWait0")));
    }

    @Test
    void loopsDueAPollCheckInTheSameTickAreSampledTogether() {
        List<CpuSpinMonitor.Reading> a = loopOf(21, "a1");
        List<CpuSpinMonitor.Reading> b = loopOf(22, "b1");
        a.get(0).pollMethods = List.of("channel.epoll.Native.epollWait0");
        b.get(0).pollMethods = List.of("channel.epoll.Native.epollWait0");
        List<Integer> rounds = new ArrayList<>();
        monitor.sampler = ids -> {
            rounds.add(ids.length);
            String[] frames = new String[ids.length];
            java.util.Arrays.fill(frames, "io.netty.handler.Busy.channelRead:12");
            return frames;
        };
        for (int i = 0; i < 9; i++) { // both loops burn a core with nothing moving: both due their first check now
            now += 250 * MS;
            cpu.merge(21L, 250 * MS, Long::sum);
            cpu.merge(22L, 250 * MS, Long::sum);
            monitor.tick(now);
        }
        assertEquals(java.util.Collections.nCopies(CpuSpinMonitor.POLL_SAMPLES, 2), rounds,
                "one round of samples for both loops, not one per loop");
        assertEquals(0, CpuSpinMonitor.episodes(), "busy in their handlers");
    }

    @Test
    void aConnectionWhoseSendLoopSpinsOnASharedLoopIsBlamedOneEnteredAFewTimesIsNot() {
        List<CpuSpinMonitor.Reading> mine = loopOf(16, "few", "many");
        mine.get(0).loopsEntered = 3; // its handshake, in the window
        mine.get(0).loopsExited = 3;
        blocked(mine, 12, 16, 0);
        assertEquals(0, CpuSpinMonitor.episodes(), "3 send-loop entries explain no core");
        for (int i = 0; i < 12; i++) { // now one re-enters its send loop 200 times a period, sending nothing
            mine.get(1).loopsEntered += 200;
            mine.get(1).loopsExited += 200;
            period(16, 1.0);
        }
        assertEquals(1, CpuSpinMonitor.ongoing());
        assertTrue(CpuSpinMonitor.openEpisodes().get(0).startsWith("CPU spin on test connection many,"),
                CpuSpinMonitor.openEpisodes().toString());
    }

    @Test
    void aConnectionStuckInItsSendIterationIsBlamedEvenWhenItBlocksTheLoop() {
        List<CpuSpinMonitor.Reading> mine = loopOf(13, "s1", "s2");
        mine.get(1).loopsEntered = 1; // entered connectionSend and never left
        blocked(mine, 12, 13, 250 * MS);
        assertEquals(1, CpuSpinMonitor.ongoing());
        String status = CpuSpinMonitor.openEpisodes().get(0);
        assertTrue(status.startsWith("CPU spin on test connection s2,"), status);
    }

    @Test
    void anEpisodeEndsWhenTheConnectionCloses() {
        CpuSpinMonitor.Reading r = watched("closing", 6, 0);
        periods(10, 6, 1.0);
        assertEquals(1, CpuSpinMonitor.ongoing());
        r.closed = true;
        period(6, 1.0);
        assertEquals(0, CpuSpinMonitor.ongoing());
    }

    /** An episode's frames are where most stack samples are, not the last instant's (CpuSpinTest saw one land in the adapter). */
    @Test
    void topFramesAreTheMostFrequentSampleNotTheLast() {
        String burn = "BusySpin$Controller.burn:67\nKwikControllerAdapter.getWindowSize:415";
        String adapter = "KwikControllerAdapter.getWindowSize:415\nRecoveryManager.reportRecoveryMetrics:295";
        String[] samples = {burn, burn, burn, burn, burn, burn, burn, adapter};
        org.junit.jupiter.api.Assertions.assertEquals(burn, CpuSpinMonitor.mostFrequentTop(samples, samples.length));
        org.junit.jupiter.api.Assertions.assertEquals(adapter, CpuSpinMonitor.mostFrequentTop(new String[] {adapter}, 1));
        org.junit.jupiter.api.Assertions.assertEquals("", CpuSpinMonitor.mostFrequentTop(new String[0], 0));
    }
}
