package dev.ccagent.agent.detect;

import dev.ccagent.agent.config.AgentArgs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The capture rules of {@link ProfilerCapture}, each checked on the real file system. */
class ProfilerCaptureTest {

    @TempDir
    Path tmp;

    @Test
    void offUnlessAskedFor() {
        assertNull(AgentArgs.parse("cc=newreno").config().profileOnSpinDir());
    }

    @Test
    void directoryIsCreatedOwnerOnly() throws Exception {
        Path dir = tmp.resolve("a/b/captures");
        assertNull(ProfilerCapture.dirProblem(dir));
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)));
    }

    @Test
    void worldWritableDirectoryIsRefused() throws Exception {
        Path dir = tmp.resolve("open");
        Files.createDirectory(dir);
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
        String problem = ProfilerCapture.dirProblem(dir);
        assertNotNull(problem);
        assertTrue(problem.contains("world-writable"), problem);
        // and a capture is not started there: no file appears
        new ProfilerCapture(dir, 1_000_000_000L, 1L, tmp.resolve("no-maps")).trigger("test");
        try (var files = Files.list(dir)) {
            assertEquals(0, files.count());
        }
    }

    @Test
    void symbolicLinkInsteadOfDirectoryIsRefused() throws Exception {
        Path real = tmp.resolve("real");
        Files.createDirectory(real);
        Path link = Files.createSymbolicLink(tmp.resolve("link"), real);
        String problem = ProfilerCapture.dirProblem(link);
        assertNotNull(problem);
        assertTrue(problem.contains("symbolic link"), problem);
    }

    @Test
    void commaInTheDirectoryNameIsRefused() throws Exception {
        Path dir = tmp.resolve("x,event=itimer");
        assertNotNull(ProfilerCapture.dirProblem(dir));
        assertFalse(Files.exists(dir), "created anyway");
        AgentArgs.Result r = AgentArgs.parse("profile-on-spin=" + dir);
        assertFalse(r.ok());
        assertTrue(r.problems().get(0).contains("comma"), r.problems().toString());
    }

    @Test
    void filesAreNewWithUnpredictableNamesAndPlantedLinksAreNotFollowed() throws Exception {
        Path dir = tmp.resolve("caps");
        assertNull(ProfilerCapture.dirProblem(dir));
        Set<String> names = new HashSet<>();
        for (int i = 0; i < 50; i++) {
            Path f = ProfilerCapture.newFile(dir, ".jfr");
            assertTrue(Files.isRegularFile(f, LinkOption.NOFOLLOW_LINKS));
            assertEquals(0, Files.size(f));
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(f)));
            assertTrue(f.getFileName().toString().matches("ccagent-spin-[0-9a-f]{16}\\.jfr"), f.toString());
            assertTrue(names.add(f.getFileName().toString()), "name repeated");
        }
        // CREATE_NEW on a planted link fails instead of writing through it: the target stays untouched
        Path victim = tmp.resolve("victim.txt");
        Files.writeString(victim, "keep");
        Path planted = Files.createSymbolicLink(dir.resolve("planted.jfr"), victim);
        assertThrows(java.nio.file.FileAlreadyExistsException.class, () -> Files.newByteChannel(planted,
                java.util.EnumSet.of(java.nio.file.StandardOpenOption.CREATE_NEW, java.nio.file.StandardOpenOption.WRITE)));
        assertEquals("keep", Files.readString(victim));
    }

    private static void assertThrows(Class<? extends Throwable> type, org.junit.jupiter.api.function.Executable e) {
        org.junit.jupiter.api.Assertions.assertThrows(type, e);
    }

    @Test
    void numberAndSizeOfCapturesAreCapped() throws Exception {
        Path dir = tmp.resolve("full");
        assertNull(ProfilerCapture.dirProblem(dir));
        for (int i = 0; i < ProfilerCapture.MAX_CAPTURES - 1; i++) {
            ProfilerCapture.newFile(dir, ".jfr");
        }
        assertNull(ProfilerCapture.capProblem(dir));
        ProfilerCapture.newFile(dir, ".jfr");
        String count = ProfilerCapture.capProblem(dir);
        assertTrue(count != null && count.contains("captures"), count);

        Path big = tmp.resolve("big");
        assertNull(ProfilerCapture.dirProblem(big));
        Path f = ProfilerCapture.newFile(big, "-cpu.html");
        try (var ch = java.nio.channels.FileChannel.open(f, java.nio.file.StandardOpenOption.WRITE)) {
            ch.write(java.nio.ByteBuffer.wrap(new byte[1]), ProfilerCapture.MAX_TOTAL_BYTES); // sparse: no disk used
        }
        String size = ProfilerCapture.capProblem(big);
        assertTrue(size != null && size.contains("MiB"), size);
        // the cap is checked before a capture starts: nothing new appears
        long before;
        try (var files = Files.list(big)) {
            before = files.count();
        }
        new ProfilerCapture(big, 1_000_000_000L, 1L, tmp.resolve("no-maps")).trigger("test");
        Thread.sleep(200);
        try (var files = Files.list(big)) {
            assertEquals(before, files.count());
        }
    }

    @Test
    void rateLimitSurvivesANewConfiguration() {
        long now = System.nanoTime();
        ProfilerCapture.markStarted(now);
        // a reconfiguration builds a new ProfilerCapture; the limit is process-wide
        new ProfilerCapture(tmp.resolve("r"), 1_000_000_000L, 600_000_000_000L, tmp.resolve("no-maps"));
        assertFalse(ProfilerCapture.rateAllows(now + 1_000_000_000L, 600_000_000_000L));
        assertTrue(ProfilerCapture.rateAllows(now + 601_000_000_000L, 600_000_000_000L));
    }

    /**
     * A spin detected while a capture runs (started by another detection: kwik observe-only's send-loop window flags
     * a spin a second before the CPU spin monitor's episode of it) names that capture; none once it has ended.
     */
    @Test
    void aTriggerWhileACaptureRunsNamesIt() {
        ProfilerCapture.markStarted(System.nanoTime()); // the running capture's start: the rate limit refuses a new one
        ProfilerCapture.markRunning("/captures/ccagent-spin-1-cpu.html");
        try {
            ProfilerCapture c = new ProfilerCapture(tmp.resolve("running"), 1_000_000_000L, 600_000_000_000L,
                    tmp.resolve("no-maps"));
            assertEquals("/captures/ccagent-spin-1-cpu.html", c.trigger("CPU spin on kwik connection 1"));
        } finally {
            ProfilerCapture.markRunning(null);
        }
        ProfilerCapture c = new ProfilerCapture(tmp.resolve("ended"), 1_000_000_000L, 600_000_000_000L, tmp.resolve("no-maps"));
        assertEquals(null, c.trigger("CPU spin on kwik connection 1"), "the rate limit refuses a new one");
    }

    @Test
    void aSecondAsyncProfilerIsNotLoaded() throws Exception {
        Path maps = tmp.resolve("maps");
        Files.writeString(maps, "7f00-7f01 r-xp 00000000 08:01 42 /usr/lib/libc.so.6\n"
                + "7f10-7f11 r-xp 00000000 08:01 43 /opt/ap/lib/libasyncProfiler.so\n");
        String problem = ProfilerCapture.otherProfiler(maps);
        assertTrue(problem != null && problem.contains("already loaded") && problem.contains("/opt/ap/lib"), problem);
        Files.writeString(maps, "7f00-7f01 r-xp 00000000 08:01 42 /usr/lib/libc.so.6\n");
        assertNull(ProfilerCapture.otherProfiler(maps));
        // through the same check a capture uses
        Path dir = tmp.resolve("p");
        Files.writeString(maps, "7f10-7f11 r-xp 00000000 08:01 43 /x/libasyncProfiler.so\n");
        assertTrue(new ProfilerCapture(dir, 1_000_000_000L, 1L, maps).refusal().contains("already loaded"));
    }
}
