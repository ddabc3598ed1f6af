package dev.ccagent.agent.netty;

import dev.ccagent.agent.log.AgentLog;
import dev.ccagent.agent.runtime.AgentRuntime;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.socket.DatagramPacket;
import io.netty.util.Attribute;
import io.netty.util.AttributeKey;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;

import java.nio.channels.ClosedChannelException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.TimeUnit;

/**
 * Sends Netty QUIC's datagrams at the time quiche asked for ({@code quiche_send_info.at}), which
 * Netty itself ignores. Sits in the parent (UDP) channel's pipeline between the socket and the
 * QUIC codec, so it runs on the event loop quiche runs on: no locks, no extra thread.
 *
 * <ul>
 *   <li>A datagram due now, with nothing queued before it for its destination, goes straight through.</li>
 *   <li>Otherwise it joins its destination's FIFO (never reordered; writes without a send time,
 *       such as Netty's close barrier, queue behind as "due now").</li>
 *   <li>One timer per pacer (the event loop's {@code schedule}), armed for the earliest head: each
 *       wake-up sends what is due, plus up to {@code maxBurst} bytes due within the next
 *       millisecond (the timer's granularity; at least what quiche's pacing rate sends in that
 *       millisecond), then flushes and re-arms. No sleeping, no spinning.</li>
 *   <li>Write promises complete only when the datagram is really written, so Netty's send loop
 *       (which waits for the write of the last datagram of a send quantum) is held back too.</li>
 * </ul>
 *
 * Queues are parallel arrays (no allocation per datagram); a timer task is allocated per wake-up.
 *
 * <p>Bounds: a send time outside [now − 1 s, now + 100 ms] counts as "now" ({@link NettyHooks#believable});
 * at most {@link #MAX_QUEUED_DATAGRAMS} datagrams and {@link #MAX_QUEUED_BYTES} bytes wait per
 * destination (beyond that the oldest leave early, in order: nothing is dropped or reordered); the
 * timer is re-armed in a {@code finally}, and when it cannot be (event loop shutting down) everything
 * queued is written at once. A datagram is written or released exactly once.
 *
 * <p>Liveness, two bounds of {@link #MAX_HOLD_NANOS}: a send loop held longer than that runs again
 * ({@link SendLoopHold}: at its next {@code connectionSend}, or at the bound by a check the first skipped
 * one scheduled, for a connection with nothing in flight that no ACK or quiche timer would send again), and
 * a wake-up more overdue than that (lost, or the event loop was blocked that long) is armed again at the
 * pacer's next write, due now. Each is one fallback line and its JFR event; nothing queued is dropped or
 * reordered. So a lost wake-up or release costs a connection about a second, not its download.
 */
final class NettyPacer extends ChannelDuplexHandler {

    static final String NAME = "ccagent-pacer";
    /** Datagrams due within this horizon may leave early, within the burst budget. */
    static final long EARLY_NANOS = 1_000_000L;
    /**
     * The timer is armed this much before the head's send time: NIO event loops wake up to 1 ms after
     * a scheduled deadline (select() takes milliseconds), and the head may leave up to
     * {@link #EARLY_NANOS} early anyway; without it a paced datagram could leave up to ~1 ms late and,
     * as quiche builds the next one only after that (send-loop hold), the lateness cost sending rate.
     */
    static final long TIMER_LEAD_NANOS = 500_000L;
    /** Re-arming for a deadline closer than this to the pending one is not worth a new timer. */
    static final long REARM_SLACK_NANOS = 200_000L;
    /** Cap on datagrams waiting per destination (beyond it, the oldest leave early). */
    static final int MAX_QUEUED_DATAGRAMS = 4096;
    /** Cap on bytes waiting per destination (beyond it, the oldest leave early). */
    static final long MAX_QUEUED_BYTES = 4L << 20;
    /** Destinations whose empty queue is kept for reuse (their rate estimate); more are dropped when empty. */
    static final int MAX_IDLE_DESTINATIONS = 64;
    /**
     * The longest a queued datagram may wait past its send time, and a send loop stay held: 10× the
     * furthest a send time may lie ahead ({@link NettyPacingHooks#MAX_LEAD_NANOS}), so that only a lost
     * wake-up (or an event loop blocked as long) reaches it.
     */
    static final long MAX_HOLD_NANOS = 1_000_000_000L;

    /**
     * Test-only fault injection, {@code -Dccagent.test.netty-fail=pacer-wakeup} (may be one of a comma-separated
     * list): the JVM's 50th pacer wake-up is armed for a day later instead of its deadline, as if it were lost.
     */
    static final boolean TEST_LOSES_WAKEUP = NettyHooks.testFault("pacer-wakeup");
    static final int TEST_LOST_WAKEUP = 50;
    private static final AtomicInteger TEST_ARMED = new AtomicInteger();

    private final int maxBurst;
    /** The clock send times are compared with ({@code CLOCK_MONOTONIC}); tests freeze it. */
    java.util.function.LongSupplier clock = System::nanoTime;
    private final Map<Object, Fifo> byDestination = new HashMap<>();
    private final List<Fifo> active = new ArrayList<>();
    private final Runnable drainTask = this::drain;
    private ChannelHandlerContext ctx;
    /** The armed wake-up, else null (package-private: a test loses it). */
    ScheduledFuture<?> timer;
    /** The deadline the armed wake-up was asked for (a head's time less the timer's lead), and when it should run. */
    private long timerDeadline;
    private long timerDue;
    private boolean draining;
    /** After channelInactive/handlerRemoved: nothing queues any more. */
    private boolean closed;
    /** Datagrams that went straight through (not held). */
    private long straight;
    private boolean summarised;

    // counters (event-loop thread only; read for logs)
    long datagrams;
    long deferred;
    long wakeups;
    long releasedOnTime;   // within 1 ms after (or up to EARLY before) the send time
    long releasedLate;     // more than 1 ms after the send time
    long maxLatenessNanos;
    long maxQueued;
    /** Datagrams that left before their time because their destination's queue was at its cap. */
    long overCap;

    /** Per QUIC channel: the datagrams the pacer holds that stopped its send loop. */
    private static final AttributeKey<SendLoopHold> HELD = AttributeKey.valueOf("dev.ccagent.netty.held");

    /** The channel's hold (created once per channel when {@code create}), or null. */
    static SendLoopHold heldOf(Channel channel, boolean create) {
        Attribute<SendLoopHold> a = channel.attr(HELD);
        SendLoopHold held = a.get();
        if (held == null && create) {
            held = new SendLoopHold();
            a.set(held);
        }
        return held;
    }

    /**
     * One QUIC channel's held send loop: how many of its datagrams that stopped its send loop the pacer
     * holds, and since when one has been held (event-loop thread only).
     */
    static final class SendLoopHold {
        /** Datagrams held that stopped the send loop (each write's completion resumes it). */
        int count;
        /** When {@link #count} last went from 0 to 1 ({@link System#nanoTime()}). */
        long since;
        /**
         * What asks a channel's send loop to run ({@code QuicheQuicChannel.connectionSendAndFlush}); a unit
         * test's own.
         */
        static java.util.function.Consumer<Channel> sendNow = NettyPacingHooks::sendNow;
        /** The check {@link #watch} schedules (made once per channel), and whether one is scheduled. */
        private Runnable check;
        private boolean watched;
        /**
         * Test-only fault injection, {@code -Dccagent.test.netty-fail=send-loop-hold} (may be one of a
         * comma-separated list): the JVM's 50th hold is counted twice and released once, as if a release were lost.
         */
        static final boolean TEST_LEAKS = NettyHooks.testFault("send-loop-hold");
        static final int TEST_LEAKED_HOLD = 50;
        private static final AtomicInteger TEST_HOLDS = new AtomicInteger();

        void hold(long now) {
            if (count == 0) {
                since = now;
            }
            count++;
            if (TEST_LEAKS && TEST_HOLDS.incrementAndGet() == TEST_LEAKED_HOLD) {
                count++;
            }
        }

        void release() {
            if (count > 0) {
                count--;
            }
        }

        /**
         * A connectionSend was skipped for this hold: makes sure that the hold is looked at again when it
         * turns {@link #MAX_HOLD_NANOS} old, even if no connectionSend comes by then. With nothing in
         * flight none would: no ACK arrives and quiche arms no timer but the idle one, so a lost release
         * used to last until the idle timeout (NettyFallbackTest, 3 runs of 25: the server had everything it
         * sent acknowledged and sent nothing more for 15 s). One scheduled check per channel at a time
         * (event-loop thread only, as every method here).
         */
        void watch(Channel channel) {
            if (watched) {
                return;
            }
            if (check == null) {
                check = () -> check(channel);
            }
            watched = true;
            // 1 ms past the bound, so that the check finds the hold over it
            long delay = Math.max(0, since + MAX_HOLD_NANOS - System.nanoTime()) + 1_000_000L;
            channel.eventLoop().schedule(check, delay, TimeUnit.NANOSECONDS);
        }

        private void check(Channel channel) {
            watched = false;
            if (count <= 0 || !channel.isOpen()) {
                return;
            }
            if (System.nanoTime() - since <= MAX_HOLD_NANOS) {
                watch(channel); // a later hold: looked at again at its own bound
                return;
            }
            sendNow.accept(channel); // its connectionSend finds the hold over the bound (held()) and runs
        }

        /**
         * Whether the send loop is held now. A hold older than {@link #MAX_HOLD_NANOS} (its datagram's send
         * time lies at most {@link NettyPacingHooks#MAX_LEAD_NANOS} ahead) is given up: the send loop runs
         * again, with one fallback line; what the pacer still holds goes out by its own time.
         */
        boolean held() {
            if (count <= 0) {
                return false; // the common case: no clock read
            }
            if (System.nanoTime() - since <= MAX_HOLD_NANOS) {
                return true;
            }
            count = 0;
            AgentRuntime.recordFallback("netty send-loop hold", "its send loop was held for more than "
                    + MAX_HOLD_NANOS / 1_000_000 + " ms (a lost release or a blocked event loop): it runs again", null);
            return false;
        }
    }

    NettyPacer(int maxBurst) {
        this.maxBurst = maxBurst;
    }

    /** Adds a pacer before the codec whose context {@code codecCtx} is (a Netty ChannelHandlerContext). */
    static void install(Object codecCtx, int maxBurst) throws ClassNotFoundException {
        ChannelHandlerContext ctx = (ChannelHandlerContext) codecCtx;
        NettyQuiche q = NettyQuiche.of(ctx.handler().getClass());
        String problem = q.broken != null ? q.broken : q.sendTimeProblem;
        if (problem != null) {
            AgentLog.warnOnce("netty-pacer:" + q.packageName, "netty: no pacing for " + q.packageName + ": " + problem,
                    null);
            return;
        }
        if (ctx.pipeline().get(NAME) == null) {
            ctx.pipeline().addBefore(ctx.name(), NAME, new NettyPacer(maxBurst));
            AgentLog.debug("netty pacer installed on " + ctx.channel() + " (max burst " + maxBurst + " bytes)");
        }
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        // An event loop shut down without closing this channel (seen with shutdownGracefully(0, 0): no
        // channelInactive, no handlerRemoved) would keep what we hold forever: when the loop has
        // terminated, nothing else runs on it, so its termination releases them here, once.
        // The listener is removed again when the channel goes (failAll), so a long-lived event loop does not
        // collect one per channel it ever served.
        try {
            terminationListener = f -> failAll();
            ctx.executor().terminationFuture().addListener(terminationListener);
        } catch (Throwable t) {
            terminationListener = null;
            AgentRuntime.recordFallback("netty pacer termination hook", t);
        }
    }

    /** Releases what is held if the event loop terminates without closing the channel; null once removed. */
    private io.netty.util.concurrent.GenericFutureListener<io.netty.util.concurrent.Future<Object>> terminationListener;

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
        long now = clock.getAsLong();
        long at = NettyPacingHooks.takeSendTime(now);
        Object holder = NettyPacingHooks.takeHolder();
        if (!(msg instanceof DatagramPacket)) {
            ctx.write(msg, promise);
            return;
        }
        datagrams++;
        DatagramPacket packet = (DatagramPacket) msg;
        NettyPacingHooks.departed(now, packet.content().readableBytes()); // a window-paced datagram's gap
        Object destination = packet.recipient();
        Fifo q = byDestination.get(destination);
        if (closed || ((q == null || q.size == 0) && !draining && at - now <= 0)) {
            straight++;
            ctx.write(msg, promise);
            return;
        }
        boolean queued = false;
        try {
            if (q == null) {
                q = new Fifo(destination);
                byDestination.put(destination, q);
            }
            if (!q.inActive) {
                q.inActive = true;
                active.add(q);
            }
            SendLoopHold held = holder instanceof Channel ? heldOf((Channel) holder, true) : null;
            q.add(msg, promise, at == 0 ? now : at, packet.content().readableBytes(), held);
            queued = true;
            if (held != null) {
                held.hold(now);
            }
            deferred++;
            if (q.size > maxQueued) {
                maxQueued = q.size;
            }
            // bounded: the oldest leave early (in order) while this destination is over a cap
            while (q.size > 1 && (q.size > MAX_QUEUED_DATAGRAMS || q.queuedBytes > MAX_QUEUED_BYTES)) {
                q.writeHead(ctx);
                overCap++;
            }
            if (!draining) {
                if (timer != null && now - timerDue > MAX_HOLD_NANOS) {
                    lostWakeUp();
                }
                arm(q.headAt() - TIMER_LEAD_NANOS, now);
            }
        } catch (Throwable t) {
            // fail open: this datagram goes out now, exactly once. If it is already queued, everything
            // queued goes out now, in order (writing it here as well would write and release it twice).
            AgentRuntime.recordFallback("netty pacer", t);
            if (queued) {
                flushAll(ctx); // every destination: the timer the others waited for may be gone
            } else {
                ctx.write(msg, promise);
            }
        }
    }

    /**
     * The armed wake-up is more than {@link #MAX_HOLD_NANOS} overdue: lost, or the event loop was blocked that
     * long. It is dropped, so that the caller arms one for the queue as it stands (due now: what is queued
     * goes out from the next wake-up on, in order). One fallback line.
     */
    private void lostWakeUp() {
        AgentRuntime.recordFallback("netty pacer wake-up", "it did not come within " + MAX_HOLD_NANOS / 1_000_000
                + " ms of its time (lost, or the event loop was blocked): armed again, what is queued goes out in order",
                null);
        timer.cancel(false);
        timer = null;
    }

    private void arm(long deadline, long now) {
        if (timer != null) {
            if (deadline >= timerDeadline - REARM_SLACK_NANOS) {
                return;
            }
            timer.cancel(false);
            timer = null;
        }
        long delay = Math.max(0, deadline - now);
        // when it should run: for a head already late (a queue behind a lost wake-up) now, not the head's time,
        // or the next write would take this fresh wake-up for a lost one too (it did, a millisecond later)
        timerDue = now + delay;
        if (TEST_LOSES_WAKEUP && TEST_ARMED.incrementAndGet() == TEST_LOST_WAKEUP) {
            delay = TimeUnit.DAYS.toNanos(1);
        }
        ScheduledFuture<?> f = ctx.executor().schedule(drainTask, delay, TimeUnit.NANOSECONDS);
        timerDeadline = deadline;
        timer = f;
    }

    private void drain() {
        timer = null;
        wakeups++;
        boolean wrote = false;
        draining = true;
        try {
            long now = clock.getAsLong();
            for (int i = 0; i < active.size(); ) {
                Fifo q = active.get(i);
                int early = 0;
                long budget = q.earlyBudget(maxBurst);
                while (q.size > 0) {
                    long at = q.headAt();
                    long lead = at - now;
                    if (lead > 0 && (lead > EARLY_NANOS || early + q.headBytes() > budget)) {
                        break;
                    }
                    if (lead > 0) {
                        early += q.headBytes();
                    }
                    long late = -lead;
                    if (late > EARLY_NANOS) {
                        releasedLate++;
                    } else {
                        releasedOnTime++;
                    }
                    if (late > maxLatenessNanos) {
                        maxLatenessNanos = late;
                    }
                    q.writeHead(ctx);
                    wrote = true;
                    now = clock.getAsLong();
                }
                if (q.size == 0) {
                    q.inActive = false;
                    active.remove(i);
                    if (byDestination.size() > MAX_IDLE_DESTINATIONS) {
                        byDestination.remove(q.destination);
                    }
                } else {
                    i++;
                }
            }
        } finally {
            draining = false;
            try {
                if (wrote) {
                    long before = straight;
                    ctx.flush();
                    // Completing those writes ran Netty's continue-sending listener, whose datagrams due
                    // now went straight through; its own flush was swallowed (the channel was inside this
                    // flush), so they would wait for the next wake-up: flush again (bounded).
                    for (int round = 0; straight != before && round < 4; round++) {
                        before = straight;
                        ctx.flush();
                    }
                }
            } finally {
                rearm();
            }
        }
    }

    /**
     * Arms the timer for the earliest head still queued (also writes that arrived while draining:
     * promise listeners re-entering quiche's send loop). If the event loop refuses the timer (it is
     * shutting down), everything queued goes out now instead of waiting for a wake-up that never comes.
     */
    private void rearm() {
        long next = Long.MAX_VALUE;
        for (Fifo q : active) {
            if (q.size > 0) {
                next = Math.min(next, q.headAt());
            }
        }
        if (next == Long.MAX_VALUE) {
            return;
        }
        try {
            arm(next - TIMER_LEAD_NANOS, clock.getAsLong());
        } catch (Throwable t) {
            AgentRuntime.recordFallback("netty pacer timer", t);
            flushAll(ctx);
        }
    }

    @Override
    public void close(ChannelHandlerContext ctx, ChannelPromise promise) throws Exception {
        flushAll(ctx);
        ctx.close(promise);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        failAll();
        ctx.fireChannelInactive();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        failAll();
    }

    /** Whether this pacer still runs: in a pipeline, its channel not gone inactive. */
    boolean live() {
        return ctx != null && !closed;
    }

    /** Datagrams waiting, over all destinations (tests, logs). */
    int queued() {
        int n = 0;
        for (int i = 0; i < active.size(); i++) {
            n += active.get(i).size;
        }
        return n;
    }

    /** Destinations with a queue object (tests: bounded). */
    int destinations() {
        return byDestination.size();
    }

    String summary() {
        return "datagrams=" + datagrams + " deferred=" + deferred + " wakeups=" + wakeups + " onTime=" + releasedOnTime
                + " late=" + releasedLate + " maxLateUs=" + maxLatenessNanos / 1000 + " maxQueued=" + maxQueued + " overCap=" + overCap;
    }

    /**
     * Writes everything queued now, in order (closing, or the timer cannot be armed). Index loops:
     * a write's listener may re-enter {@link #write} and queue more, which is written in this pass too.
     */
    private void flushAll(ChannelHandlerContext ctx) {
        boolean wrote = false;
        boolean wasDraining = draining;
        draining = true;
        try {
            for (int i = 0; i < active.size(); i++) {
                Fifo q = active.get(i);
                while (q.size > 0) {
                    q.writeHead(ctx);
                    wrote = true;
                }
            }
        } finally {
            draining = wasDraining;
            for (int i = 0; i < active.size(); i++) {
                active.get(i).inActive = active.get(i).size > 0;
            }
            active.removeIf(q -> !q.inActive);
        }
        if (wrote) {
            ctx.flush();
        }
    }

    /**
     * The channel went inactive or the pacer was removed: every queued datagram is released and its
     * promise failed, once; from now on writes pass straight through (nothing queues behind a dead timer).
     */
    private void failAll() {
        closed = true;
        if (terminationListener != null && ctx != null) {
            try {
                ctx.executor().terminationFuture().removeListener(terminationListener);
            } catch (Throwable ignored) {
                // nothing held any more after this call either way
            }
            terminationListener = null;
        }
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
        for (int i = 0; i < active.size(); i++) {
            Fifo q = active.get(i);
            q.failAll();
            q.inActive = false;
        }
        active.clear();
        byDestination.clear();
        if (AgentLog.enabled(AgentLog.Level.DEBUG) && datagrams > 0 && ctx != null && !summarised) {
            summarised = true;
            AgentLog.debug("netty pacer " + ctx.channel() + ": " + summary());
        }
    }

    /** One destination's queue: a ring of (message, promise, send time, bytes). */
    static final class Fifo {
        final Object destination;
        Object[] msgs = new Object[64];
        ChannelPromise[] promises = new ChannelPromise[64];
        long[] ats = new long[64];
        int[] bytes = new int[64];
        /** The hold of the channel whose send loop the datagram stopped, else null. */
        SendLoopHold[] held = new SendLoopHold[64];
        int head;
        int size;
        /** Bytes of the datagrams in the ring. */
        long queuedBytes;
        boolean inActive;
        /** quiche's pacing rate as its send times show it: bytes per nanosecond (EWMA), 0 until known. */
        double bytesPerNano;
        private long lastAt = Long.MIN_VALUE;
        private long bytesAtLastAt;

        Fifo(Object destination) {
            this.destination = destination;
        }

        void add(Object msg, ChannelPromise promise, long at, int len, SendLoopHold heldCounter) {
            if (size == msgs.length) {
                grow();
            }
            int i = (head + size) & (msgs.length - 1);
            msgs[i] = msg;
            promises[i] = promise;
            // FIFO: never earlier than the datagram before it
            long prev = size > 0 ? ats[(head + size - 1) & (msgs.length - 1)] : Long.MIN_VALUE;
            ats[i] = size > 0 && at - prev < 0 ? prev : at;
            bytes[i] = len;
            held[i] = heldCounter;
            size++;
            queuedBytes += len;
            observeRate(ats[i], len);
        }

        /**
         * Follows the rate quiche paces at from the spacing of its send times: the bytes due at one
         * time divided by the gap to the next later time (gaps over 50 ms are idle time, not pacing).
         */
        private void observeRate(long at, int len) {
            if (at == lastAt) {
                bytesAtLastAt += len;
                return;
            }
            long gap = at - lastAt;
            if (lastAt != Long.MIN_VALUE && gap > 0 && gap < 50_000_000L) {
                double sample = (double) bytesAtLastAt / gap;
                bytesPerNano = bytesPerNano == 0 ? sample : 0.875 * bytesPerNano + 0.125 * sample;
            }
            lastAt = at;
            bytesAtLastAt = len;
        }

        /**
         * Bytes one wake-up may send ahead of their time: the configured burst, or what quiche's rate
         * sends in the timer's granularity when that is more. A NIO event loop's timer wakes a
         * millisecond late; at hundreds of Mbit/s a fixed 16 KiB would idle the socket between wake-ups.
         */
        long earlyBudget(int maxBurst) {
            return Math.max(maxBurst, (long) (bytesPerNano * EARLY_NANOS));
        }

        long headAt() {
            return ats[head];
        }

        int headBytes() {
            return bytes[head];
        }

        void writeHead(ChannelHandlerContext ctx) {
            Object msg = msgs[head];
            ChannelPromise p = promises[head];
            dropHead();
            ctx.write(msg, p);
        }

        void failAll() {
            while (size > 0) {
                Object msg = msgs[head];
                ChannelPromise p = promises[head];
                dropHead();
                ReferenceCountUtil.release(msg);
                p.tryFailure(new ClosedChannelException());
            }
        }

        /** Takes the head out of the ring (its message and promise were read by the caller). */
        private void dropHead() {
            release(head);
            queuedBytes -= bytes[head];
            msgs[head] = null;
            promises[head] = null;
            head = (head + 1) & (msgs.length - 1);
            size--;
        }

        private void release(int i) {
            SendLoopHold h = held[i];
            if (h != null) {
                held[i] = null;
                h.release();
            }
        }

        private void grow() {
            int n = msgs.length * 2;
            Object[] m = new Object[n];
            ChannelPromise[] p = new ChannelPromise[n];
            long[] a = new long[n];
            int[] b = new int[n];
            SendLoopHold[] h = new SendLoopHold[n];
            for (int k = 0; k < size; k++) {
                int from = (head + k) & (msgs.length - 1);
                m[k] = msgs[from];
                p[k] = promises[from];
                a[k] = ats[from];
                b[k] = bytes[from];
                h[k] = held[from];
            }
            msgs = m;
            promises = p;
            ats = a;
            bytes = b;
            held = h;
            head = 0;
        }
    }

    @Override
    public boolean isSharable() {
        return false;
    }

    static boolean isPacer(ChannelHandler h) {
        return h instanceof NettyPacer;
    }
}
