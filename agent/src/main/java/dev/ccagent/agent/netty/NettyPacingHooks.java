package dev.ccagent.agent.netty;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.runtime.AgentRuntime;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The pacing glue around Netty's send loop: the pacer's installation on each QUIC codec, quiche's send
 * time of each datagram (the {@code send_info} it fills, one slot per event-loop thread), the
 * send-loop hold that lets quiche produce the next datagram near its release time, and the skipped
 * {@code connectionSend} while a paced datagram is held. {@link NettyPacer} takes the send times.
 */
final class NettyPacingHooks {

    /** A send time this far (or more) after now is not believed: the datagram is treated as due now. */
    static final long MAX_LEAD_NANOS = 100_000_000L;
    /** A send time this far (or more) before now is not believed either (stale or garbage). */
    static final long MAX_LAG_NANOS = 1_000_000_000L;

    /** Per event-loop thread: the send_info buffer quiche fills for the next datagram. */
    private static final ThreadLocal<SendSlot> SLOT = ThreadLocal.withInitial(SendSlot::new);
    private static final List<SendSlot> SLOTS = new CopyOnWriteArrayList<>();

    /** A datagram is "paced ahead" when quiche's send time is this far in the future. */
    static final long AHEAD_NANOS = 50_000L;

    /** After {@code QuicheQuicCodec.handlerAdded(ctx)}: puts the pacer between the socket and the codec. */
    static void onCodecAdded(Object ctx) {
        try {
            AgentConfig cfg = AgentRuntime.config();
            if (cfg != null && cfg.targets("netty") && cfg.netty().pacing() && NettyLinkage.linked(ctx)) {
                NettyPacer.install(ctx, cfg.netty().maxBurstBytes());
            }
        } catch (Throwable t) {
            AgentRuntime.recordFallback("netty pacer installation", t);
        }
    }

    /** After {@code QuicheQuicConnection.nextSendInfo()}: quiche fills this buffer for the datagram it writes next. */
    static void onSendInfo(ByteBuffer sendInfo) {
        try {
            AgentConfig cfg = AgentRuntime.config();
            if (cfg == null || !(cfg.netty().pacing() || cfg.netty().statsPeriodNanos() > 0)) {
                return;
            }
            SendSlot s = SLOT.get();
            if (s.pending != null) {
                s.observe(System.nanoTime()); // no datagram took the previous one
            }
            s.pending = sendInfo;
        } catch (Throwable t) {
            AgentRuntime.recordFallback("netty send time", t);
        }
    }

    /**
     * Before {@code QuicheQuicChannel.writePacket}: true when the datagram about to be written will be
     * held by the pacer beyond its early horizon. Netty then treats the send window as used and resumes
     * its send loop when that write completes, so quiche produces the next datagram near its own
     * release time instead of queueing a whole window in the pacer (which would inflate every RTT
     * sample by the time spent in the queue).
     */
    static boolean holdSendLoop(Object channel) {
        try {
            AgentConfig cfg = AgentRuntime.config();
            if (cfg == null || !cfg.netty().pacing() || !NettyLinkage.linked(channel)) {
                return false;
            }
            SendSlot s = SLOT.get();
            s.holder = null;
            s.window = null;
            ByteBuffer b = s.pending;
            if (b == null) {
                return false;
            }
            NettyChannelPacing p = NettyChannelPacing.of(channel);
            if (!p.paced()) {
                return false; // no pacer of ours under this channel: Netty's send loop stays as it is
            }
            long sec = b.getLong(272);
            long nsec = b.getLong(280);
            if (b.order() != ByteOrder.nativeOrder()) {
                sec = Long.reverseBytes(sec);
                nsec = Long.reverseBytes(nsec);
            }
            long now = System.nanoTime();
            long at = believable(sec * 1_000_000_000L + nsec, now);
            if (at != 0 && at - now >= AHEAD_NANOS) {
                p.quichePaces();
            } else {
                long w = p.windowSendTime(now); // quiche set no send time: the window's, if any
                if (w != 0) {
                    s.window = p;
                    s.windowAt = w;
                    at = w;
                }
            }
            boolean hold = at != 0 && at - now > NettyPacer.EARLY_NANOS;
            // the pacer counts this datagram as the channel's held one; a stale holder (no pacer took
            // it) never outlives the next datagram of quiche's send loop
            if (hold) {
                s.holder = channel;
            }
            return hold;
        } catch (Throwable t) {
            AgentRuntime.recordFallback("netty send-loop hold", t);
            return false;
        }
    }

    /**
     * Before {@code QuicheQuicChannel.connectionSend}: true (skip it, answering "nothing sent") while
     * one of this channel's datagrams is held by the pacer with Netty's continue-sending listener on
     * its write. That write's completion calls {@code connectionSend} again, so nothing is lost; in the
     * meantime quiche is not asked for datagrams it would stamp as sent long before they leave (which
     * inflated its RTT samples and BBR's view of in-flight data). Never skips a closing channel, nor one
     * held longer than {@link NettyPacer#MAX_HOLD_NANOS} (a lost release: see {@link NettyPacer.SendLoopHold#held});
     * a skip makes sure the hold is looked at again at that bound ({@link NettyPacer.SendLoopHold#watch}).
     */
    static boolean skipSend(Object channel) {
        try {
            AgentConfig cfg = AgentRuntime.config();
            if (cfg == null || !cfg.netty().pacing() || !NettyLinkage.linked(channel)) {
                return false;
            }
            io.netty.channel.Channel ch = (io.netty.channel.Channel) channel;
            if (!ch.isOpen() || !NettyChannelPacing.of(ch).paced()) {
                return false; // closing, or no pacer of ours under this channel
            }
            NettyPacer.SendLoopHold held = NettyPacer.heldOf(ch, false);
            if (held != null && held.held()) {
                SLOT.get().skippedSends++;
                held.watch(ch);
                return true;
            }
            return false;
        } catch (Throwable t) {
            AgentRuntime.recordFallback("netty send skip", t);
            return false;
        }
    }

    /**
     * Asks {@code channel}'s send loop to run now ({@code QuicheQuicChannel.connectionSendAndFlush}, on its
     * event loop): for a send-loop hold that no connectionSend came to end ({@link NettyPacer.SendLoopHold#watch}).
     * Never throws; a failure is one fallback (the hold then ends at the next connectionSend, as before).
     */
    static void sendNow(io.netty.channel.Channel channel) {
        try {
            NettyQuiche.of(channel.getClass()).sendNow(channel);
        } catch (Throwable t) {
            AgentRuntime.recordFallback("netty send-loop hold check", t);
        }
    }

    /**
     * quiche's send time {@code at} as the pacer may use it: 0 ("now") when outside
     * [now − {@link #MAX_LAG_NANOS}, now + {@link #MAX_LEAD_NANOS}] (garbage, a clock quiche does not
     * share with us, or a buffer read after it was released).
     */
    static long believable(long at, long now) {
        long lead = at - now;
        return at == 0 || lead >= MAX_LEAD_NANOS || lead <= -MAX_LAG_NANOS ? 0 : at;
    }

    /** The {@code SendResult.NONE} constant of the calling package (what a skipped connectionSend answers). */
    static Object sendResultNone(Class<?> channelClass) {
        try {
            return NettyQuiche.of(channelClass).sendResultNone();
        } catch (Throwable t) {
            return null; // Netty's callers only compare it with NONE/SOME
        }
    }

    /**
     * quiche's send loop on this thread ended (quiche answered DONE, or the loop threw): its last
     * send_info is no one's any more. A later write on this thread that is not from a send loop
     * (Retry, version negotiation, stateless reset) must not take its send time, nor read a buffer
     * {@code QuicheQuicConnection.free()} may already have released.
     */
    static void endSendLoop() {
        try {
            SendSlot s = SLOT.get();
            if (s.pending != null) {
                s.pending = null;
                s.cleared++;
            }
            s.holder = null;
            s.window = null;
        } catch (Throwable ignored) {
            // nothing held
        }
    }

    /** The channel whose send loop the datagram being written on this thread stopped (null if none). */
    static Object takeHolder() {
        SendSlot s = SLOT.get();
        Object h = s.holder;
        s.holder = null;
        return h;
    }

    /**
     * quiche's send time ({@code CLOCK_MONOTONIC}, comparable with {@link System#nanoTime()}) of the
     * datagram being written on this thread, or 0 when the write did not come from quiche's send loop.
     */
    static long takeSendTime(long now) {
        SendSlot s = SLOT.get();
        if (s.pending == null) {
            s.window = null;
            return 0;
        }
        long at = s.observe(now);
        return s.window != null ? s.windowAt : at;
    }

    /**
     * The pacer took the datagram being written on this thread ({@code bytes} long): when its send time
     * came from its connection's window ({@link NettyChannelPacing}), the next one leaves after its gap.
     */
    static void departed(long now, int bytes) {
        SendSlot s = SLOT.get();
        NettyChannelPacing w = s.window;
        if (w != null) {
            s.window = null;
            w.sent(now, bytes);
        }
    }

    /** Counts of event-loop threads that ended (their slots are pruned): skipped, seen, ahead, max lead, unbelievable. */
    private static final long[] RETIRED = new long[5];

    /**
     * {datagrams seen, datagrams whose send time was ≥ 50 µs ahead, largest lead ns, skipped sends,
     * send times not believed}, over all threads (slots of threads that ended are folded in and dropped).
     */
    static long[] sendTimeStats() {
        long[] out = new long[5];
        synchronized (RETIRED) {
            pruneSlots();
            out[0] = RETIRED[1];
            out[1] = RETIRED[2];
            out[2] = RETIRED[3];
            out[3] = RETIRED[0];
            out[4] = RETIRED[4];
        }
        for (SendSlot s : SLOTS) {
            out[3] += s.skippedSends;
            out[0] += s.seen;
            out[1] += s.ahead;
            out[2] = Math.max(out[2], s.maxLead);
            out[4] += s.unbelievable;
        }
        return out;
    }

    /** Drops the slots of threads that ended (caller holds RETIRED), keeping their counts. */
    private static void pruneSlots() {
        for (SendSlot s : SLOTS) {
            Thread t = s.thread.get();
            if (t == null || !t.isAlive()) {
                RETIRED[0] += s.skippedSends;
                RETIRED[1] += s.seen;
                RETIRED[2] += s.ahead;
                RETIRED[3] = Math.max(RETIRED[3], s.maxLead);
                RETIRED[4] += s.unbelievable;
                SLOTS.remove(s);
            }
        }
    }

    /** Live per-thread slots (tests: the list must not grow with threads that ended). */
    static int slotCount() {
        synchronized (RETIRED) {
            pruneSlots();
        }
        return SLOTS.size();
    }

    static final class SendSlot {
        ByteBuffer pending;
        /** The channel whose send loop stopped on the datagram being written (see {@link #holdSendLoop}). */
        Object holder;
        /** The channel whose window timed the datagram being written (quiche gave it no send time), else null. */
        NettyChannelPacing window;
        long windowAt;
        long skippedSends;
        long seen;
        long ahead;
        long maxLead;
        /** Send times outside the believable window (treated as "now"). */
        long unbelievable;
        /** send_infos a send loop left unclaimed at its end. */
        long cleared;
        final java.lang.ref.WeakReference<Thread> thread = new java.lang.ref.WeakReference<>(Thread.currentThread());

        SendSlot() {
            synchronized (RETIRED) {
                pruneSlots();
            }
            SLOTS.add(this);
        }

        long observe(long now) {
            ByteBuffer b = pending;
            pending = null;
            long sec = b.getLong(272);
            long nsec = b.getLong(280);
            if (b.order() != ByteOrder.nativeOrder()) {
                sec = Long.reverseBytes(sec);
                nsec = Long.reverseBytes(nsec);
            }
            long raw = sec * 1_000_000_000L + nsec;
            long at = believable(raw, now);
            if (at == 0 && raw != 0) {
                unbelievable++;
            }
            seen++;
            long lead = at == 0 ? 0 : at - now;
            if (lead >= AHEAD_NANOS) {
                ahead++;
                if (lead > maxLead) {
                    maxLead = lead;
                }
            }
            return at == 0 ? 0 : at;
        }
    }

    private NettyPacingHooks() {
    }
}
