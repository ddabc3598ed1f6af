package dev.ccagent.it.emulator;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The emulator measured with plain UDP on 127.0.0.1: each datagram carries its sequence number
 * and send time; a sink records arrivals. The spreads the timing bounds' comments quote ("7 runs, 2026-12-06")
 * come from the class's printed figures in two clean-clone gates and five runs of the class alone, six of the seven
 * beside another forked test run (load average 4-8).
 */
class LinkEmulatorTest {

    private static final long MS = 1_000_000L;

    /** Receives datagrams and records (sequence, arrival time); echoes them back when asked. */
    static final class Sink implements AutoCloseable {
        final DatagramChannel channel;
        final List<long[]> arrivals = new ArrayList<>();
        final Thread thread;
        final boolean echo;
        volatile boolean running = true;

        Sink(boolean echo) throws IOException {
            this.echo = echo;
            channel = DatagramChannel.open();
            channel.setOption(StandardSocketOptions.SO_RCVBUF, 8 << 20);
            channel.bind(new InetSocketAddress("127.0.0.1", 0));
            thread = new Thread(this::run, "sink");
            thread.setDaemon(true);
            thread.start();
        }

        InetSocketAddress address() throws IOException {
            return (InetSocketAddress) channel.getLocalAddress();
        }

        private void run() {
            ByteBuffer b = ByteBuffer.allocate(2048);
            try {
                while (running) {
                    b.clear();
                    SocketAddress from = channel.receive(b);
                    long now = System.nanoTime();
                    b.flip();
                    long seq = b.getLong(0);
                    long sent = b.getLong(8);
                    synchronized (arrivals) {
                        arrivals.add(new long[] {seq, now, sent, b.remaining()});
                    }
                    if (echo) {
                        channel.send(b, from);
                    }
                }
            } catch (IOException e) {
                // closed
            }
        }

        List<long[]> arrivals() {
            synchronized (arrivals) {
                return new ArrayList<>(arrivals);
            }
        }

        @Override
        public void close() throws IOException {
            running = false;
            channel.close();
        }
    }

    private Sink sink;
    private DatagramChannel client;

    @BeforeEach
    void open() throws IOException {
        sink = new Sink(false);
        client = DatagramChannel.open();
        client.setOption(StandardSocketOptions.SO_SNDBUF, 8 << 20);
        client.setOption(StandardSocketOptions.SO_RCVBUF, 8 << 20);
        client.bind(new InetSocketAddress("127.0.0.1", 0));
    }

    @AfterEach
    void close() throws IOException {
        client.close();
        sink.close();
    }

    private void send(LinkEmulator em, int count, int size, long spacingNanos) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(size);
        long next = System.nanoTime();
        for (int i = 0; i < count; i++) {
            if (spacingNanos > 0) {
                while (System.nanoTime() < next) {
                    LockSupport.parkNanos(Math.max(1, next - System.nanoTime()));
                }
                next += spacingNanos;
            }
            b.clear();
            b.putLong(0, i);
            b.putLong(8, System.nanoTime());
            client.send(b, em.address());
        }
    }

    private List<long[]> awaitArrivals(int expected, long timeoutMs) {
        long deadline = System.nanoTime() + timeoutMs * MS;
        List<long[]> a = sink.arrivals();
        long lastChange = System.nanoTime();
        int lastSize = -1;
        while (System.nanoTime() < deadline) {
            a = sink.arrivals();
            if (a.size() >= expected) {
                return a;
            }
            if (a.size() != lastSize) {
                lastSize = a.size();
                lastChange = System.nanoTime();
            } else if (System.nanoTime() - lastChange > 1500 * MS) {
                return a; // nothing more is coming
            }
            LockSupport.parkNanos(20 * MS);
        }
        return a;
    }

    private double measuredRate(long bps, int packets) throws Exception {
        synchronized (sink.arrivals) {
            sink.arrivals.clear();
        }
        LinkProfile p = LinkProfile.builder().rate(bps).buffer(16 << 20).build();
        try (LinkEmulator em = LinkEmulator.start(sink.address(), p, LinkProfile.transparent(), 1)) {
            // offer 1.5x the link rate: the emulator's queue fills, while the kernel's socket buffers
            // (rmem_max is often only 208 KiB) never have to hold a burst the emulator has not read yet
            send(em, packets, 1200, (long) (1200 * 8e9 / (bps * 1.5)));
            List<long[]> a = awaitArrivals(packets, 20_000);
            assertEquals(packets, a.size(), "a 16 MiB buffer drops nothing");
            // bytes after the first arrival over the time to the last: over ~2.5 s a receiver thread
            // descheduled for a few ms at either end moves the figure by a fraction of a percent
            long span = a.get(packets - 1)[1] - a.get(0)[1];
            return (packets - 1) * 1200 * 8e9 / span;
        }
    }

    @Test
    void rateWithinThreePercentAt10And50Mbit() throws Exception {
        // 3% of the ~2.4 s span is 72 ms: it fails only on a 72 ms delay of the first or the last arrival alone (or of the
        // sender before the queue builds). Measured 0.9997-1.0079 (7 runs, 2026-12-06); the emulator's worst lateness in a
        // whole transfer of the gate's ITs, under Netty load, was 2.9-36 ms (median 7.6 ms, 273 transfers, 2026-12-04):
        // one chosen datagram 72 ms late is an estimated under 1 in 10,000 a run
        double r10 = measuredRate(10_000_000, 2500);
        double r50 = measuredRate(50_000_000, 12_500);
        System.out.printf(java.util.Locale.ROOT, "[emulator] rate: %.4f and %.4f of 10 and 50 Mbit/s%n", r10 / 10_000_000,
                r50 / 50_000_000); // printed to measure the spread (odds above)
        assertEquals(1.0, r10 / 10_000_000, 0.03, "measured " + r10);
        assertEquals(1.0, r50 / 50_000_000, 0.03, "measured " + r50);
    }

    @Test
    void addedDelayWithinOneMillisecond() throws Exception {
        LinkProfile p = LinkProfile.builder().delay(20 * MS).build();
        try (LinkEmulator em = LinkEmulator.start(sink.address(), p, LinkProfile.transparent(), 1)) {
            send(em, 100, 200, 2 * MS);
            List<long[]> a = awaitArrivals(100, 10_000);
            assertEquals(100, a.size());
            long[] delays = a.stream().mapToLong(x -> x[1] - x[2]).sorted().toArray();
            long median = delays[delays.length / 2];
            System.out.printf(java.util.Locale.ROOT, "[emulator] one-way delay: median %.3f ms, max %.3f ms%n", median / 1e6,
                    delays[delays.length - 1] / 1e6); // printed to measure the spread
            // margin 1 ms: it fails if more than half of the 100 datagrams are over 1 ms late. Measured: median 20.145-20.310
            // ms, max 21.9-31.9 ms (7 runs, 2026-12-06): a failure needs the median 0.69 ms later than the latest
            // seen, four times the medians' whole range (0.17 ms) beyond it; under 1 in 10,000 a run stated from that
            // margin, not from a fitted spread
            assertTrue(Math.abs(median - 20 * MS) < MS, "median one-way delay " + median / 1e6 + " ms");
            // exact: each datagram is queued for its admission time + 20 ms, which is after its send stamp
            assertTrue(delays[0] >= 20 * MS, "never early: " + delays[0]);
        }
    }

    @Test
    void randomLossWithinStatisticalBoundsAndRepeatableBySeed() throws Exception {
        long[][] received = new long[2][];
        for (int run = 0; run < 2; run++) {
            clearArrivals();
            LinkProfile p = LinkProfile.builder().loss(0.05).build();
            try (LinkEmulator em = LinkEmulator.start(sink.address(), p, LinkProfile.transparent(), 42)) {
                send(em, 4000, 100, 20_000);
                List<long[]> a = awaitArrivals(4000, 10_000);
                long dropped = em.toServerStats().get("droppedRandom");
                assertEquals(4000, a.size() + dropped, "every datagram delivered or counted as dropped");
                // deterministic: seed 42 draws once per datagram in the order they arrive, the same losses every run
                // while the kernel drops none before the emulator (checked just above): odds 0
                double sigma = Math.sqrt(4000 * 0.05 * 0.95);
                assertTrue(Math.abs(dropped - 200) < 5 * sigma, "dropped " + dropped + " of 4000 at 5%");
                received[run] = a.stream().mapToLong(x -> x[0]).sorted().toArray();
            }
        }
        assertTrue(Arrays.equals(received[0], received[1]), "same seed, same packets lost");
    }

    @Test
    void dropTailBufferIsNeverExceeded() throws Exception {
        LinkProfile p = LinkProfile.builder().rate(10_000_000).buffer(30_000).build();
        try (LinkEmulator em = LinkEmulator.start(sink.address(), p, LinkProfile.transparent(), 1)) {
            send(em, 500, 1200, 0);
            List<long[]> a = awaitArrivals(500, 5_000);
            var s = em.toServerStats();
            // the buffer holds 25 datagrams of 0.96 ms each: the 500 back-to-back sends overflow it unless they take 456 ms
            assertTrue(s.get("droppedQueue") > 0, "a blast overflows a 30 kB buffer");
            assertTrue(s.get("maxBacklogBytes") <= 30_000, "backlog " + s.get("maxBacklogBytes"));
            assertEquals(500, a.size() + s.get("droppedQueue"));
        }
    }

    /**
     * The queueing-delay percentiles the benchmark matrix reports: a paced stream below the rate waits
     * for nothing; a blast of 20 datagrams into a 10 Mbit/s link (0.96 ms each) queues up to ~18 ms.
     */
    @Test
    void queueingDelayIsMeasuredAtTheBottleneck() throws Exception {
        LinkProfile p = LinkProfile.builder().rate(10_000_000).buffer(1 << 20).build();
        try (LinkEmulator em = LinkEmulator.start(sink.address(), p, LinkProfile.transparent(), 1)) {
            send(em, 20, 1200, 3_000_000); // 3 ms apart: the link (0.96 ms per datagram) is idle at each arrival
            awaitArrivals(20, 5_000);
            var s = em.toServerStats();
            // a late sender thread may bunch two sends (one then waits 0.96 ms): the median is still no wait
            // the median fails only if over half the 20 sends wait, the p95 if two wait over 2 ms (a stall of about 12 ms
            // of the sender or the emulator's reader in these 60 ms). Measured p50 0 and p95 0-1,000 us (7 runs, 2026-12-06):
            // under 1 in 10,000 a run stated from those margins
            System.out.println("[emulator] paced queue: p50 " + s.get("queueDelayP50Micros") + " us, p95 "
                    + s.get("queueDelayP95Micros") + " us"); // printed to measure the spread
            assertEquals(0L, s.get("queueDelayP50Micros"), "no standing queue: " + s);
            assertTrue(s.get("queueDelayP95Micros") <= 2_000, "no standing queue: " + s);
        }
        try (LinkEmulator em = LinkEmulator.start(sink.address(), p, LinkProfile.transparent(), 1)) {
            send(em, 20, 1200, 0);
            awaitArrivals(40, 5_000);
            var s = em.toServerStats();
            long p50 = s.get("queueDelayP50Micros");
            long p95 = s.get("queueDelayP95Micros");
            // the i-th datagram waits ~i × 0.96 ms (less whatever the sender's own spacing was)
            // the upper bounds are exact (waits are set at admission, at most i × 0.96 ms). The lower ones: the first 10
            // sends admitted within 4.6 ms of the first, the first 19 within 5.3 ms. Measured p50 8,500-8,700 us and p95
            // 17,100-17,300 us (7 runs, 2026-12-06): the lower bounds lie 4,500 and 5,100 us below, 22 times the
            // range seen; under 1 in 10,000 a run stated from that margin
            System.out.println("[emulator] blast queue: p50 " + p50 + " us, p95 " + p95 + " us"); // to measure the spread
            assertTrue(p50 >= 4_000 && p50 <= 11_000, "median of 0..18 ms: " + s);
            assertTrue(p95 >= 12_000 && p95 <= 19_500, "p95 near 18 ms: " + s);
        }
    }

    @Test
    void jitterKeepsOrderUnlessReorderingIsAsked() throws Exception {
        LinkProfile jitter = LinkProfile.builder().delay(5 * MS).jitter(5 * MS).build();
        try (LinkEmulator em = LinkEmulator.start(sink.address(), jitter, LinkProfile.transparent(), 3)) {
            send(em, 300, 100, 300_000);
            List<long[]> a = awaitArrivals(300, 5_000);
            assertEquals(300, a.size());
            assertEquals(0, inversions(a), "jitter alone must not reorder");
        }
        clearArrivals();
        LinkProfile reorder = LinkProfile.builder().delay(5 * MS).reorder(0.1, 3 * MS).build();
        try (LinkEmulator em = LinkEmulator.start(sink.address(), reorder, LinkProfile.transparent(), 3)) {
            send(em, 300, 100, 300_000);
            List<long[]> a = awaitArrivals(300, 5_000);
            assertEquals(300, a.size());
            // which datagrams get the extra 3 ms is seed 3's (30 of 300 expected, the same ones every run); each makes an
            // inversion unless no later datagram (0.3 ms apart) comes within its 3 ms: failing needs ~25 such gaps, odds ~0
            assertTrue(inversions(a) > 5, "reordering asked for: " + inversions(a));
        }
    }

    @Test
    void duplicationBlackoutAndBurstLoss() throws Exception {
        LinkProfile dup = LinkProfile.builder().duplicate(0.5).build();
        try (LinkEmulator em = LinkEmulator.start(sink.address(), dup, LinkProfile.transparent(), 5)) {
            send(em, 1000, 100, 20_000);
            // the count of twins is final once all 1000 are admitted; then wait for every copy (asserting
            // on the first 1500 arrivals raced the last twins in flight)
            long until = System.nanoTime() + 5_000 * MS;
            while (em.toServerStats().get("packetsIn") < 1000 && System.nanoTime() < until) {
                LockSupport.parkNanos(10 * MS);
            }
            long dups = em.toServerStats().get("duplicated");
            List<long[]> a = awaitArrivals((int) (1000 + dups), 5_000);
            assertEquals(1000 + dups, a.size());
            assertTrue(dups > 400 && dups < 600, "duplicated " + dups); // deterministic: seed 5, one draw a datagram; odds 0
        }
        clearArrivals();
        LinkProfile blackout = LinkProfile.builder().blackout(100 * MS, 300 * MS).build();
        try (LinkEmulator em = LinkEmulator.start(sink.address(), blackout, LinkProfile.transparent(), 5)) {
            send(em, 100, 100, 5 * MS); // 0–500 ms
            List<long[]> a = awaitArrivals(100, 5_000);
            long blacked = em.toServerStats().get("droppedBlackout");
            // the window is 100-300 ms after the emulator's start, so the margin is 10 datagrams: a 50 ms stall of the
            // sender or the emulator's reader across an edge of the window, or a first send 150 ms after the start.
            // Measured 37-40 of 100 (7 runs, 2026-12-06), 7 above the lower bound at the closest: under 1 in
            // 10,000 a run stated from that margin
            System.out.println("[emulator] blackout: " + blacked + " of 100 dropped"); // printed to measure the spread
            assertTrue(blacked >= 30 && blacked <= 50, "about 40 of 100 fall in 200 ms of 500: " + blacked);
            assertEquals(100, a.size() + blacked);
        }
        clearArrivals();
        LinkProfile burst = LinkProfile.builder().burstLoss(0.01, 0.2, 1.0).build();
        try (LinkEmulator em = LinkEmulator.start(sink.address(), burst, LinkProfile.transparent(), 7)) {
            send(em, 5000, 100, 10_000);
            List<long[]> a = awaitArrivals(5000, 10_000);
            boolean[] got = new boolean[5000];
            a.forEach(x -> got[(int) x[0]] = true);
            int losses = 0;
            int runs = 0;
            for (int i = 0; i < 5000; i++) {
                if (!got[i]) {
                    losses++;
                    if (i == 0 || got[i - 1]) {
                        runs++;
                    }
                }
            }
            // deterministic: seed 7 draws the Gilbert-Elliott states and losses per datagram, the same every run: odds 0
            assertTrue(losses > 50, "losses " + losses);
            double meanBurst = (double) losses / runs;
            assertTrue(meanBurst > 3, "Gilbert-Elliott losses come in bursts (mean 1/0.2 = 5): " + meanBurst);
        }
    }

    @Test
    void burstyServiceAggregatesDeliveries() throws Exception {
        LinkProfile wifi = LinkProfile.builder().bursty(10 * MS).build();
        try (LinkEmulator em = LinkEmulator.start(sink.address(), wifi, LinkProfile.transparent(), 1)) {
            send(em, 200, 100, MS); // one per ms: about ten per service opportunity
            List<long[]> a = awaitArrivals(200, 5_000);
            assertEquals(200, a.size());
            int clustered = 0;
            for (int i = 1; i < a.size(); i++) {
                if (a.get(i)[1] - a.get(i - 1)[1] < 500_000) {
                    clustered++;
                }
            }
            // about 20 gaps expected (one per 10 ms service slot) against 48 allowed, so about 29 more pauses of 0.5 ms
            // inside bursts sent microseconds apart. Measured 179 of 199 in each of 7 runs, 2026-12-06: under 1 in 10,000 a
            // run stated from that margin
            System.out.println("[emulator] bursty: " + clustered + " of 199 arrivals clustered"); // to measure the spread
            assertTrue(clustered > 150, "most arrivals follow the previous one within 0.5 ms: " + clustered);
        }
    }

    @Test
    void repliesTravelTheReverseDirection() throws Exception {
        try (Sink echo = new Sink(true);
             LinkEmulator em = LinkEmulator.start(echo.address(), LinkProfile.transparent(),
                     LinkProfile.builder().delay(10 * MS).build(), 1)) {
            ByteBuffer b = ByteBuffer.allocate(100);
            b.putLong(0, 7).putLong(8, System.nanoTime());
            long t0 = System.nanoTime();
            client.send(b, em.address());
            ByteBuffer r = ByteBuffer.allocate(200);
            client.configureBlocking(true);
            SocketAddress from = client.receive(r);
            long rtt = System.nanoTime() - t0;
            assertEquals(em.address(), from, "the reply comes from the emulator");
            assertEquals(7, r.getLong(0));
            assertTrue(rtt >= 10 * MS, "reply delayed by the to-client profile: " + rtt); // exact: queued for 10 ms
            // a hang guard: ~10 ms expected; 490 ms late is 13x the emulator's worst lateness measured in the ITs (36 ms)
            assertTrue(rtt < 500 * MS, "and not lost in the emulator: " + rtt);
        }
    }

    private void clearArrivals() {
        synchronized (sink.arrivals) {
            sink.arrivals.clear();
        }
    }

    private static int inversions(List<long[]> a) {
        int n = 0;
        for (int i = 1; i < a.size(); i++) {
            if (a.get(i)[0] < a.get(i - 1)[0]) {
                n++;
            }
        }
        return n;
    }
}
