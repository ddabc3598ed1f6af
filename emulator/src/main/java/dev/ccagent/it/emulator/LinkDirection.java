package dev.ccagent.it.emulator;

import dev.ccagent.link.TimeOrdered;

import java.io.IOException;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * One direction of the emulated link: admission (blackout, burst and random loss, drop-tail
 * buffer, serialisation at the rate, propagation delay, jitter, reordering, duplication, bursty
 * service) decided when a datagram arrives, and one thread that sends each datagram at its
 * delivery time.
 *
 * <p>The bottleneck queue is virtual: the serialiser's busy-until time {@code linkFreeAt} says how
 * many bytes wait ({@code (linkFreeAt − now) × rate}), which is exact for a FIFO drained at the
 * rate and needs no thread of its own. The delivery thread parks until the earliest deadline
 * ({@link LockSupport#parkNanos}); it never spins.
 */
final class LinkDirection implements AutoCloseable {

    /** Counters, readable at any time. */
    static final class Stats {
        final AtomicLong packetsIn = new AtomicLong();
        final AtomicLong bytesIn = new AtomicLong();
        final AtomicLong droppedRandom = new AtomicLong();
        final AtomicLong droppedBurst = new AtomicLong();
        final AtomicLong droppedQueue = new AtomicLong();
        final AtomicLong droppedBlackout = new AtomicLong();
        final AtomicLong duplicated = new AtomicLong();
        final AtomicLong packetsOut = new AtomicLong();
        final AtomicLong bytesOut = new AtomicLong();
        final AtomicLong maxBacklogBytes = new AtomicLong();
        /** Largest lateness of a send against its deadline, nanoseconds (the timer's precision). */
        final AtomicLong maxLatenessNanos = new AtomicLong();
        final AtomicLong sendErrors = new AtomicLong();

        /** Queueing delay at the bottleneck of each admitted datagram, in 0.1 ms buckets (the last: ≥ 2 s). */
        final java.util.concurrent.atomic.AtomicLongArray queueDelayHistogram =
                new java.util.concurrent.atomic.AtomicLongArray(QUEUE_DELAY_BUCKETS);

        /**
         * The q-quantile (0..1) of the bottleneck queueing delay of admitted datagrams, nanoseconds (the
         * upper edge of its 0.1 ms bucket); -1 when nothing was admitted through a rate-limited link.
         */
        long queueDelayQuantileNanos(double q) {
            long total = 0;
            for (int i = 0; i < QUEUE_DELAY_BUCKETS; i++) {
                total += queueDelayHistogram.get(i);
            }
            if (total == 0) {
                return -1;
            }
            long rank = Math.max(1, (long) Math.ceil(q * total));
            long seen = 0;
            for (int i = 0; i < QUEUE_DELAY_BUCKETS; i++) {
                seen += queueDelayHistogram.get(i);
                if (seen >= rank) {
                    return i == 0 ? 0 : i * QUEUE_DELAY_BUCKET_NANOS;
                }
            }
            return (QUEUE_DELAY_BUCKETS - 1) * QUEUE_DELAY_BUCKET_NANOS;
        }

        long dropped() {
            return droppedRandom.get() + droppedBurst.get() + droppedQueue.get() + droppedBlackout.get();
        }
    }

    static final int QUEUE_DELAY_BUCKETS = 20_001;
    static final long QUEUE_DELAY_BUCKET_NANOS = 100_000;

    private static final class Pending extends TimeOrdered<Pending> {
        final ByteBuffer data;
        final DatagramChannel channel;
        final SocketAddress to;

        Pending(long at, long seq, ByteBuffer data, DatagramChannel channel, SocketAddress to) {
            super(at, seq);
            this.data = data;
            this.channel = channel;
            this.to = to;
        }
    }

    final String name;
    final LinkProfile profile;
    final Stats stats = new Stats();
    private final long start;
    private final SplittableRandom random;
    private final PriorityQueue<Pending> queue = new PriorityQueue<>();
    private final Thread sender;
    private volatile boolean running = true;
    private long seq;
    private long linkFreeAt;
    private long lastDelivery;
    private boolean gilbertBad;

    LinkDirection(String name, LinkProfile profile, long seed, long startNanos) {
        this.name = name;
        this.profile = profile;
        this.random = new SplittableRandom(seed);
        this.start = startNanos;
        this.linkFreeAt = startNanos;
        this.sender = new Thread(this::sendLoop, "link-emulator-" + name);
        this.sender.setDaemon(true);
        this.sender.start();
    }

    /** Decides the datagram's fate; called by the emulator's single receive thread. */
    void admit(ByteBuffer data, DatagramChannel out, SocketAddress to) {
        long now = System.nanoTime();
        long sinceStart = now - start;
        int size = data.remaining();
        stats.packetsIn.incrementAndGet();
        stats.bytesIn.addAndGet(size);
        if (profile.inBlackout(sinceStart)) {
            stats.droppedBlackout.incrementAndGet();
            return;
        }
        if (profile.link.burstLoss().goodToBad > 0) {
            if (gilbertBad) {
                if (random.nextDouble() < profile.link.burstLoss().badToGood) {
                    gilbertBad = false;
                }
            } else if (random.nextDouble() < profile.link.burstLoss().goodToBad) {
                gilbertBad = true;
            }
            if (gilbertBad && random.nextDouble() < profile.link.burstLoss().lossInBad) {
                stats.droppedBurst.incrementAndGet();
                return;
            }
        }
        if (profile.link.lossProbability() > 0 && random.nextDouble() < profile.link.lossProbability()) {
            stats.droppedRandom.incrementAndGet();
            return;
        }
        long rate = profile.link.rateAt(sinceStart);
        long departed = now;
        if (rate > 0) {
            long backlog = (long) (Math.max(0, linkFreeAt - now) * (rate / 8e9));
            if (backlog + size > profile.link.bufferBytes()) {
                stats.droppedQueue.incrementAndGet();
                return;
            }
            stats.maxBacklogBytes.accumulateAndGet(backlog + size, Math::max);
            long txStart = Math.max(now, linkFreeAt);
            // bucket 0 = no wait; then 0.1 ms buckets by the upper edge
            long waited = txStart - now;
            int bucket = waited <= 0 ? 0 : (int) Math.min(QUEUE_DELAY_BUCKETS - 1,
                    (waited + QUEUE_DELAY_BUCKET_NANOS - 1) / QUEUE_DELAY_BUCKET_NANOS);
            stats.queueDelayHistogram.incrementAndGet(bucket);
            linkFreeAt = txStart + (long) Math.ceil(size * 8e9 / rate);
            departed = linkFreeAt;
        }
        long deliver = departed + profile.link.delayNanos();
        if (profile.jitterNanos > 0) {
            deliver += (long) (random.nextDouble() * profile.jitterNanos);
        }
        boolean reordered = profile.reorderProbability > 0 && random.nextDouble() < profile.reorderProbability;
        if (reordered) {
            deliver += profile.reorderExtraDelayNanos;
        } else {
            deliver = Math.max(deliver, lastDelivery); // jitter alone never reorders
            lastDelivery = deliver;
        }
        if (profile.serviceIntervalNanos > 0) {
            long slot = profile.serviceIntervalNanos;
            deliver = start + ((deliver - start + slot - 1) / slot) * slot;
        }
        ByteBuffer copy = ByteBuffer.allocate(size);
        copy.put(data).flip();
        // the twin is made before the original is queued: the sending thread consumes its position
        ByteBuffer twin = profile.duplicateProbability > 0 && random.nextDouble() < profile.duplicateProbability
                ? copy.duplicate() : null;
        enqueue(deliver, copy, out, to);
        if (twin != null) {
            stats.duplicated.incrementAndGet();
            enqueue(deliver, twin, out, to);
        }
    }

    private void enqueue(long at, ByteBuffer data, DatagramChannel out, SocketAddress to) {
        boolean head;
        synchronized (queue) {
            Pending p = new Pending(at, seq++, data, out, to);
            queue.add(p);
            head = queue.peek() == p;
        }
        if (head) {
            LockSupport.unpark(sender);
        }
    }

    private void sendLoop() {
        while (running) {
            Pending due = null;
            long wait = -1;
            synchronized (queue) {
                Pending p = queue.peek();
                if (p != null) {
                    long now = System.nanoTime();
                    if (p.time <= now) {
                        due = queue.poll();
                        stats.maxLatenessNanos.accumulateAndGet(now - p.time, Math::max);
                    } else {
                        wait = p.time - now;
                    }
                }
            }
            if (due != null) {
                try {
                    int n = due.data.remaining();
                    due.channel.send(due.data, due.to);
                    stats.packetsOut.incrementAndGet();
                    stats.bytesOut.addAndGet(n);
                } catch (IOException e) {
                    stats.sendErrors.incrementAndGet();
                }
            } else if (wait < 0) {
                LockSupport.park(this);
            } else {
                LockSupport.parkNanos(this, wait);
            }
        }
    }

    /** Datagrams admitted but not yet sent. */
    int inTransit() {
        synchronized (queue) {
            return queue.size();
        }
    }

    @Override
    public void close() {
        running = false;
        LockSupport.unpark(sender);
        try {
            sender.join(2_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
