package dev.ccagent.it.kwik;

import tech.kwik.core.QuicClientConnection;
import tech.kwik.core.QuicStream;

import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.Method;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A kwik bulk-transfer client (see {@link BulkData}). Runs {@code --connections} transfers, at most
 * {@code --parallel} at a time, one connection and one stream each, and prints one line per transfer:
 *
 * <pre>
 * RESULT conn=3 odcid=1f2e... mode=down bytes=20000000 seconds=2.345 mbps=68.2 ok=true
 * MONO RESULT conn=3 start=N end=N (System.nanoTime() when the request went out and when the last byte came)
 * </pre>
 * then {@code SUMMARY connections=N ok=K failed=F}. Exits 0 when every transfer was intact, 1 on a
 * checksum or length mismatch, 2 on bad arguments, 3 when {@code --timeout-seconds} ran out.
 *
 * <pre>
 * java dev.ccagent.it.kwik.KwikBulkClient --port P [--host 127.0.0.1] [--mode up|down] [--bytes N]
 *      [--seed S] [--connections K] [--parallel P] [--stream-window BYTES] [--timeout-seconds T]
 *      [--stall-seconds S (a transfer whose byte count does not move for S seconds is reported
 *       as {@code STALL conn=i at=<bytes> odcid=<id>}, then kwik's own state of it as
 *       {@code STALLSTATE conn=i ...} ({@link KwikState}), and aborted)] [--stall-retries R (then retried on a new
 *       connection up to R times, each printing {@code RETRY ...})]
 *      [--warmup-port P --warmup-bytes N (first one download of N bytes from port P, printed as
 *       {@code WARMUP ...} instead of {@code RESULT}: JIT-compiles both ends before the measured
 *       transfers; the benchmarks point it straight at the server, past the link emulator)]
 *      [--warmup-stall-seconds S --warmup-stall-retries R (the warm-up's own stall detection and
 *       retries; by default those of the measured transfers)]
 *      [--ramp-millis M (connection i starts no earlier than i x M ms after the first: without it, 200
 *       parallel handshakes at once on 2 cores leave some clients with a first RTT sample of 3-7 s, so
 *       kwik's first PTO, 3 x that, comes after a lost request only 10-22 s later)]
 * </pre>
 * Downloads are compared byte for byte with the seeded stream; uploads by the server's SHA-256.
 * The client grants the server {@code --stream-window} per stream and ten times that per connection
 * (kwik's client builder ties the two).
 */
public final class KwikBulkClient {

    /**
     * The agent arguments for this client (the integration tests and the benchmarks): kwik's two fixes and
     * nothing else. This client runs kwik 0.10.9, whose own stream-send race can hold back the request it
     * writes (the side that writes a stream needs the fix): a clean-clone test run once saw a warm-up stall
     * at 0 bytes against a server with the fix on; and whose loss-detection-timer race can leave its lost
     * request without a timer, so that nothing resends it ({@code fix.kwik-loss-timer}, KwikChurnTest's stall).
     */
    public static final String CLIENT_AGENT = "fix.kwik-stream-stall=on;fix.kwik-loss-timer=on;detect=off;log=warn";

    private KwikBulkClient() {
    }

    public static void main(String[] args) throws Exception {
        String host = "127.0.0.1";
        String mode = "up";
        long bytes = 20_000_000;
        long seed = 1;
        int connections = 1;
        int parallel = 1;
        long streamWindow = 10_000_000;
        int timeoutSeconds = 240;
        int stallSeconds = 0;
        int stallRetries = 0;
        long rampMillis = 0;
        int warmupPort = -1;
        long warmupBytes = 0;
        int warmupStallSeconds = -1;
        int warmupStallRetries = -1;
        List<Integer> ports = new ArrayList<>();
        try {
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "--host": host = args[++i]; break;
                    case "--port":
                        for (String p : args[++i].split(",")) {
                            ports.add(Integer.parseInt(p));
                        }
                        break;
                    case "--mode": mode = args[++i]; break;
                    case "--bytes": bytes = Long.parseLong(args[++i]); break;
                    case "--seed": seed = Long.parseLong(args[++i]); break;
                    case "--connections": connections = Integer.parseInt(args[++i]); break;
                    case "--parallel": parallel = Integer.parseInt(args[++i]); break;
                    case "--stream-window": streamWindow = Long.parseLong(args[++i]); break;
                    case "--timeout-seconds": timeoutSeconds = Integer.parseInt(args[++i]); break;
                    case "--stall-seconds": stallSeconds = Integer.parseInt(args[++i]); break;
                    case "--stall-retries": stallRetries = Integer.parseInt(args[++i]); break;
                    case "--ramp-millis": rampMillis = Long.parseLong(args[++i]); break;
                    case "--warmup-port": warmupPort = Integer.parseInt(args[++i]); break;
                    case "--warmup-bytes": warmupBytes = Long.parseLong(args[++i]); break;
                    case "--warmup-stall-seconds": warmupStallSeconds = Integer.parseInt(args[++i]); break;
                    case "--warmup-stall-retries": warmupStallRetries = Integer.parseInt(args[++i]); break;
                    default: throw new IllegalArgumentException("unknown argument " + args[i]);
                }
            }
            if (ports.isEmpty() || !(mode.equals("up") || mode.equals("down"))) {
                throw new IllegalArgumentException("need --port and --mode up|down");
            }
            if ((warmupPort > 0) != (warmupBytes > 0)) {
                throw new IllegalArgumentException("--warmup-port and --warmup-bytes go together");
            }
            if (warmupPort <= 0 && (warmupStallSeconds >= 0 || warmupStallRetries >= 0)) {
                throw new IllegalArgumentException("--warmup-stall-seconds and --warmup-stall-retries need --warmup-port");
            }
        } catch (RuntimeException e) {
            System.err.println("bad arguments: " + e.getMessage());
            System.exit(2);
            return;
        }
        final int timeout = timeoutSeconds;
        Thread watchdog = new Thread(() -> {
            try {
                Thread.sleep(timeout * 1000L);
                System.out.println("TIMEOUT after " + timeout + " s");
                System.out.flush();
                Runtime.getRuntime().halt(3);
            } catch (InterruptedException e) {
                // done in time
            }
        }, "watchdog");
        watchdog.setDaemon(true);
        watchdog.start();

        if (warmupPort > 0) {
            int warmStall = warmupStallSeconds >= 0 ? warmupStallSeconds : stallSeconds;
            int warmRetries = warmupStallRetries >= 0 ? warmupStallRetries : stallRetries;
            Boolean warm;
            int attempt = 0;
            while ((warm = transfer("WARMUP", -1, host, warmupPort, "down", warmupBytes, seed - 1, streamWindow,
                    warmStall, attempt < warmRetries)) == null) {
                attempt++;
                System.out.println("RETRY conn=-1 attempt=" + attempt + " (the warm-up stalled)");
            }
            if (!warm) {
                System.out.println("SUMMARY warm-up failed");
                awaitClosed();
                System.exit(1);
            }
        }
        // with several ports (comma separated), connection i goes to ports[i % ports.size()]
        int total = connections;
        ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, parallel));
        List<Future<Boolean>> results = new ArrayList<>();
        AtomicInteger ok = new AtomicInteger();
        long firstStart = System.nanoTime();
        final long ramp = rampMillis;
        for (int i = 0; i < total; i++) {
            final int index = i;
            final int p = ports.get(i % ports.size());
            final String h = host;
            final String m = mode;
            final long n = bytes;
            final long s = seed + i;
            final long w = streamWindow;
            final int st = stallSeconds;
            final int retries = stallRetries;
            results.add(pool.submit(() -> {
                long wait = firstStart + index * ramp * 1_000_000L - System.nanoTime();
                if (wait > 0) {
                    Thread.sleep(wait / 1_000_000L);
                }
                Boolean good;
                int attempt = 0;
                while ((good = transfer("RESULT", index, h, p, m, n, s, w, st, attempt < retries)) == null) {
                    attempt++;
                    System.out.println("RETRY conn=" + index + " attempt=" + attempt + " (the previous attempt stalled)");
                    System.out.flush();
                }
                if (good) {
                    ok.incrementAndGet();
                }
                return good;
            }));
        }
        for (Future<Boolean> f : results) {
            f.get();
        }
        pool.shutdown();
        int failed = total - ok.get();
        if (ABANDONED.get() > 0) {
            System.out.println("ABANDONED total=" + ABANDONED.get() + " closeBlocked=" + ABANDONED_CLOSE_UNFINISHED.get());
        }
        System.out.println("SUMMARY connections=" + total + " ok=" + ok.get() + " failed=" + failed);
        System.out.flush();
        awaitClosed();
        System.exit(failed == 0 ? 0 : 1);
    }

    /**
     * True: intact; false: failed; null: stalled and {@code retryOnStall} (no RESULT line printed). With stall
     * detection the transfer runs on a thread of its own, and this waits for its outcome: the transfer's, or the
     * stall monitor's when it abandons a stalled attempt that does not end after its close ({@link #ABANDON_WAIT}).
     */
    static Boolean transfer(String label, int index, String host, int port, String mode, long bytes, long seed,
                            long streamWindow, int stallSeconds, boolean retryOnStall) throws InterruptedException {
        Attempt attempt = new Attempt(label, mode);
        if (stallSeconds <= 0) {
            return runAttempt(attempt, label, index, host, port, mode, bytes, seed, streamWindow, 0, retryOnStall);
        }
        Thread worker = new Thread(() -> {
            Boolean good = false;
            try {
                good = runAttempt(attempt, label, index, host, port, mode, bytes, seed, streamWindow, stallSeconds, retryOnStall);
            } finally {
                attempt.outcome.complete(good);
            }
        }, "transfer-" + index);
        // an abandoned attempt's thread may never end; it must not keep the JVM alive
        worker.setDaemon(true);
        attempt.worker = worker;
        worker.start();
        try {
            return attempt.outcome.get();
        } catch (java.util.concurrent.ExecutionException e) {
            return false;
        }
    }

    /**
     * One attempt's shared state: the transfer's thread, the stall monitor and the waiting caller. Whoever
     * {@linkplain #settle settles} it first prints its last line and gives its outcome; the other stays silent.
     */
    static final class Attempt {
        final java.util.concurrent.atomic.AtomicLong progress = new java.util.concurrent.atomic.AtomicLong();
        final java.util.concurrent.atomic.AtomicBoolean stalled = new java.util.concurrent.atomic.AtomicBoolean();
        final java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
        final java.util.concurrent.atomic.AtomicBoolean settled = new java.util.concurrent.atomic.AtomicBoolean();
        final java.util.concurrent.atomic.AtomicReference<String> closeReason = new java.util.concurrent.atomic.AtomicReference<>();
        final java.util.concurrent.CompletableFuture<Boolean> outcome = new java.util.concurrent.CompletableFuture<>();
        final String label, mode;
        volatile Thread worker;

        Attempt(String label, String mode) {
            this.label = label;
            this.mode = mode;
        }

        /** True for the first caller only: it reports the attempt. */
        boolean settle() {
            return settled.compareAndSet(false, true);
        }
    }

    /**
     * How long a stalled attempt gets to end after its connection's close before it is abandoned. kwik's
     * {@code close()} aborts the connection's streams, which wakes the blocked read at once; an attempt still
     * running 10 s later is stuck (2026-12-06: one of 10,000, 200 at a time, never ended, and the client with it).
     */
    static final Duration ABANDON_WAIT = Duration.ofSeconds(10);
    /** Attempts abandoned, and of those the ones whose close had not returned either. */
    static final AtomicInteger ABANDONED = new AtomicInteger(), ABANDONED_CLOSE_UNFINISHED = new AtomicInteger();

    /** One attempt of {@link #transfer}, on the calling thread. */
    static Boolean runAttempt(Attempt attempt, String label, int index, String host, int port, String mode, long bytes,
                           long seed, long streamWindow, int stallSeconds, boolean retryOnStall) {
        long t0 = System.nanoTime();
        String odcid = "?";
        QuicClientConnection conn = null;
        java.util.concurrent.atomic.AtomicLong progress = attempt.progress;
        java.util.concurrent.atomic.AtomicBoolean stalled = attempt.stalled;
        java.util.concurrent.atomic.AtomicBoolean done = attempt.done;
        java.util.concurrent.atomic.AtomicReference<String> closeReason = attempt.closeReason;
        try {
            conn = QuicClientConnection.newBuilder()
                    .uri(URI.create("https://" + host + ":" + port))
                    .applicationProtocol(BulkData.ALPN)
                    .noServerCertificateCheck()
                    .defaultStreamReceiveBufferSize(streamWindow)
                    .connectTimeout(Duration.ofSeconds(30))
                    .maxIdleTimeout(Duration.ofSeconds(30))
                    .build();
            watchClose(conn, closeReason);
            conn.connect();
            odcid = originalDcid(conn);
            if (stallSeconds > 0) {
                startStallMonitor(index, odcid, conn, attempt, stallSeconds, retryOnStall);
            }
            QuicStream stream = conn.createStream(true);
            OutputStream out = stream.getOutputStream();
            InputStream in = stream.getInputStream();
            boolean good;
            long received;
            t0 = System.nanoTime();
            if (mode.equals("up")) {
                out.write(BulkData.header(BulkData.UPLOAD, bytes, seed));
                MessageDigest md = BulkData.sha256();
                byte[] buf = new byte[32 * 1024];
                for (long pos = 0; pos < bytes; ) {
                    int n = (int) Math.min(buf.length, bytes - pos);
                    BulkData.fill(seed, pos, buf, 0, n);
                    md.update(buf, 0, n);
                    out.write(buf, 0, n);
                    pos += n;
                    progress.set(pos);
                }
                out.close();
                String reply = new String(in.readAllBytes(), StandardCharsets.US_ASCII).strip();
                String expected = "OK " + bytes + " " + BulkData.hex(md.digest());
                good = reply.equals(expected);
                received = bytes;
                if (!good) {
                    System.out.println("MISMATCH conn=" + index + " expected '" + expected + "' got '" + reply + "'");
                }
            } else {
                out.write(BulkData.header(BulkData.DOWNLOAD, bytes, seed));
                out.flush();
                // byte-for-byte against the seeded stream: stronger than a checksum, and cheaper
                byte[] buf = new byte[64 * 1024];
                byte[] exp = new byte[64 * 1024];
                long count = 0;
                boolean same = true;
                for (int n; (n = in.read(buf)) >= 0; ) {
                    int e = (int) Math.max(0, Math.min(n, bytes - count));
                    BulkData.fill(seed, count, exp, 0, e);
                    same &= e == n && java.util.Arrays.mismatch(buf, 0, n, exp, 0, n) < 0;
                    count += n;
                    progress.set(count);
                }
                out.close();
                received = count;
                good = count == bytes && same;
                if (!good) {
                    System.out.println("MISMATCH conn=" + index + " expected " + bytes + " bytes, got " + count);
                }
            }
            long t1 = System.nanoTime();
            if (!attempt.settle()) {
                return null; // abandoned: the stall monitor reported it
            }
            double seconds = (t1 - t0) / 1e9;
            System.out.printf("%s conn=%d odcid=%s mode=%s bytes=%d seconds=%.3f mbps=%.1f ok=%s%n", label,
                    index, odcid, mode, received, seconds, received * 8 / seconds / 1e6, good);
            // System.nanoTime() is the machine's CLOCK_MONOTONIC on Linux: another JVM can place the transfer in time
            System.out.printf("MONO %s conn=%d start=%d end=%d%n", label, index, t0, t1);
            System.out.flush();
            return good;
        } catch (Exception e) {
            if (!attempt.settle() || (stalled.get() && retryOnStall)) {
                return null;
            }
            String error = stalled.get() ? "stalled_at_" + progress.get() + "_bytes" : e.toString().replace(' ', '_');
            if (closeReason.get() != null) {
                // how kwik says the connection ended: who closed it, and with which error
                error += ";" + closeReason.get().replace(' ', '_');
            }
            System.out.println(label + " conn=" + index + " odcid=" + odcid + " mode=" + mode + " ok=false error=" + error);
            System.out.flush();
            return false;
        } finally {
            done.set(true);
            if (conn != null) {
                try {
                    conn.close();
                } catch (RuntimeException ignored) {
                    // closing is best effort
                }
                forgetClosed();
                CLOSING.add(new Closing(conn, System.nanoTime()));
            }
        }
    }

    /** A connection this client closed, and when. */
    record Closing(QuicClientConnection conn, long closedAtNanos) {
    }

    /**
     * Connections closed less than {@link #CLOSE_WAIT} ago. {@code close()} only queues CONNECTION_CLOSE for
     * kwik's sender thread; the frame must leave before this JVM exits, or the server's connection lives on
     * until its idle timeout. The next transfer does not wait for it: kwik's closing state lasts three PTOs
     * (0.3-0.5 s on a 20 ms path, the 2 s cap after a server that spun), which a sequential client spent
     * between transfers before 2026-12-06; {@link #awaitClosed} waits once, at the exit.
     */
    static final java.util.concurrent.ConcurrentLinkedQueue<Closing> CLOSING = new java.util.concurrent.ConcurrentLinkedQueue<>();
    static final Duration CLOSE_WAIT = Duration.ofSeconds(2);

    /**
     * Before the exit: each connection closed less than {@link #CLOSE_WAIT} ago gets kwik's
     * {@code closeAndWait} (at most the rest of it, and at most kwik's 4 PTOs) to reach its closed state.
     */
    static void awaitClosed() {
        for (Closing c; (c = CLOSING.poll()) != null; ) {
            long left = CLOSE_WAIT.toNanos() - (System.nanoTime() - c.closedAtNanos());
            if (left > 0) {
                try {
                    c.conn().closeAndWait(Duration.ofNanos(left));
                } catch (RuntimeException ignored) {
                    // closing is best effort
                }
            }
        }
    }

    /** Forgets the connections closed longer than {@link #CLOSE_WAIT} ago: a long run does not hold them. */
    static void forgetClosed() {
        long now = System.nanoTime();
        for (Closing c; (c = CLOSING.peek()) != null && now - c.closedAtNanos() > CLOSE_WAIT.toNanos(); ) {
            CLOSING.remove(c);
        }
    }

    /**
     * Keeps how the connection ended (kwik's {@code ConnectionTerminatedEvent}: reason, whether the peer
     * closed, the error codes and text) for a failed transfer's error; a kwik without the listener API
     * just leaves it empty.
     */
    static void watchClose(QuicClientConnection conn, java.util.concurrent.atomic.AtomicReference<String> closeReason) {
        try {
            conn.setConnectionListener(new tech.kwik.core.ConnectionListener() {
                @Override
                public void disconnected(tech.kwik.core.ConnectionTerminatedEvent e) {
                    closeReason.set("closed=" + e.closeReason() + ",byPeer=" + e.closedByPeer() + ",transportError="
                            + e.transportErrorCode() + ",applicationError=" + e.applicationErrorCode() + ",description="
                            + e.errorDescription());
                }
            });
        } catch (LinkageError | RuntimeException older) {
            // not in this kwik version
        }
    }

    /**
     * Declares the transfer stalled when its byte count has not moved for {@code seconds}: prints
     * {@code STALL conn=i at=<bytes> odcid=<the connection's original DCID>} and closes the connection, so the transfer
     * fails fast instead of waiting for the idle timeout. The close runs on a thread of its own; when the attempt has
     * not ended {@link #ABANDON_WAIT} later, it is abandoned: {@code ABANDONED conn=i ...} with where the attempt's
     * and the close's threads stand ({@code ABANDONSTACK}), then the caller goes on (retry, or a failed
     * {@code RESULT ... error=stalled_at_<bytes>_bytes;abandoned}).
     */
    static void startStallMonitor(int index, String odcid, QuicClientConnection conn, Attempt attempt, int seconds,
                                  boolean retryOnStall) {
        Thread t = new Thread(() -> {
            long last = -1;
            long since = System.nanoTime();
            while (!attempt.done.get()) {
                long now = System.nanoTime();
                long p = attempt.progress.get();
                if (p != last) {
                    last = p;
                    since = now;
                } else if (now - since > seconds * 1_000_000_000L) {
                    attempt.stalled.set(true);
                    System.out.println("STALL conn=" + index + " at=" + p + " odcid=" + odcid);
                    System.out.println("STALLSTATE conn=" + index + " " + KwikState.describe(conn));
                    System.out.flush();
                    Thread closer = new Thread(() -> {
                        try {
                            conn.close();
                        } catch (RuntimeException e) {
                            System.out.println("CLOSEFAILED conn=" + index + " " + e);
                        }
                    }, "stall-close-" + index);
                    closer.setDaemon(true);
                    closer.start();
                    awaitOrAbandon(index, odcid, p, attempt, closer, retryOnStall);
                    return;
                }
                try {
                    Thread.sleep(100);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "stall-monitor-" + index);
        t.setDaemon(true);
        t.start();
    }

    /** Waits {@link #ABANDON_WAIT} for the stalled attempt to end after its close; abandons it if it does not. */
    static void awaitOrAbandon(int index, String odcid, long at, Attempt attempt, Thread closer, boolean retryOnStall) {
        try {
            attempt.outcome.get(ABANDON_WAIT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
            return;
        } catch (java.util.concurrent.TimeoutException stuck) {
            // abandoned below
        } catch (InterruptedException | java.util.concurrent.ExecutionException e) {
            return;
        }
        if (!attempt.settle()) {
            return; // the attempt reported itself in the meantime
        }
        boolean closeFinished = !closer.isAlive();
        ABANDONED.incrementAndGet();
        if (!closeFinished) {
            ABANDONED_CLOSE_UNFINISHED.incrementAndGet();
        }
        System.out.println("ABANDONED conn=" + index + " odcid=" + odcid + " close=" + (closeFinished ? "returned" : "blocked")
                + " (the stalled attempt had not ended " + ABANDON_WAIT.toSeconds() + " s after its close)");
        printStack(index, "attempt", attempt.worker);
        printStack(index, "close", closer);
        if (!retryOnStall) {
            System.out.println(attempt.label + " conn=" + index + " odcid=" + odcid + " mode=" + attempt.mode
                    + " ok=false error=stalled_at_" + at
                    + "_bytes;abandoned");
        }
        System.out.flush();
        attempt.outcome.complete(retryOnStall ? null : Boolean.FALSE);
    }

    /**
     * {@code ABANDONSTACK conn=i thread=<role> state=<state> lock=<the monitor or lock it waits for, held by>
     * at=<frames>}: where a thread of an abandoned attempt stands, and the stack of the lock's owner, if any.
     */
    static void printStack(int index, String role, Thread thread) {
        if (thread == null) {
            return;
        }
        java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        java.lang.management.ThreadInfo info = threads.getThreadInfo(new long[] {thread.getId()}, true, true)[0];
        if (info == null) {
            System.out.println("ABANDONSTACK conn=" + index + " thread=" + role + " ended");
            return;
        }
        System.out.println("ABANDONSTACK conn=" + index + " thread=" + role + " state=" + info.getThreadState() + " lock="
                + info.getLockName() + " owner=" + info.getLockOwnerName() + " at=" + frames(info.getStackTrace()));
        if (info.getLockOwnerId() >= 0) {
            java.lang.management.ThreadInfo owner = threads.getThreadInfo(new long[] {info.getLockOwnerId()}, true, true)[0];
            if (owner != null) {
                System.out.println("ABANDONSTACK conn=" + index + " thread=" + role + "-lock-owner name=" + owner.getThreadName()
                        + " state=" + owner.getThreadState() + " lock=" + owner.getLockName() + " at=" + frames(owner.getStackTrace()));
            }
        }
    }

    private static String frames(StackTraceElement[] stack) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < Math.min(stack.length, 25); i++) {
            b.append(i == 0 ? "" : "<").append(stack[i]);
        }
        return b.toString().replace(' ', '_');
    }

    /** The connection's original destination connection id in hex (kwik has no public getter on clients). */
    static String originalDcid(Object connection) {
        try {
            for (Class<?> c = connection.getClass(); c != null; c = c.getSuperclass()) {
                for (Method m : c.getDeclaredMethods()) {
                    if (m.getName().equals("getConnectionIdManager") && m.getParameterCount() == 0
                            && !java.lang.reflect.Modifier.isAbstract(m.getModifiers())) {
                        m.setAccessible(true);
                        Object manager = m.invoke(connection);
                        return BulkData.hex((byte[]) manager.getClass().getMethod("getOriginalDestinationConnectionId").invoke(manager));
                    }
                }
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            return "?";
        }
        return "?";
    }
}
