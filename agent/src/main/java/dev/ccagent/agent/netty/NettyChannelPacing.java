package dev.ccagent.agent.netty;

import dev.ccagent.agent.log.AgentLog;
import dev.ccagent.agent.runtime.AgentRuntime;
import dev.ccagent.cc.pacing.RateDepartures;
import dev.ccagent.cc.pacing.WindowPacingRate;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.util.Attribute;
import io.netty.util.AttributeKey;


/**
 * One QUIC channel's pacing: whether the agent's {@link NettyPacer} runs under it at all (only then
 * may the send-loop hooks change anything for it), and, for a connection quiche does not pace (since
 * quiche 0.24.7 only its BBR sets a future {@code send_info.at}; Reno and CUBIC get "now"), send times
 * from its own window: {@link WindowPacingRate} (Linux's rule) over quiche's path stats, spaced by
 * {@link RateDepartures}. The pacer then releases them by its usual rules (early horizon, burst budget).
 *
 * <p>The window and RTT come from Netty's public {@code QuicChannel.collectPathStats(0, promise)},
 * asked on the connection's event loop as a task of its own (after the send loop that found the
 * sample due, not inside it), at most every {@code srtt / 4} within [{@link #MIN_SAMPLE_NANOS},
 * {@link #MAX_SAMPLE_NANOS}] and only while the connection sends: a datagram allocates nothing, an
 * idle connection costs nothing. A connection stops being window-paced for good when quiche gives
 * it a future send time (quiche paces it) or it runs quiche's BBR; any failure turns it off for that
 * connection (one fallback record) and the datagrams are due now, as without it.
 */
final class NettyChannelPacing implements Runnable {

    private static final AttributeKey<NettyChannelPacing> KEY = AttributeKey.valueOf("dev.ccagent.netty.channel-pacing");
    /** The state of every channel with no pacer under it: nothing changes for those. */
    private static final NettyChannelPacing NO_PACER = new NettyChannelPacing(null, null);

    /** quiche's smoothed RTT before its first sample (its {@code INITIAL_RTT}, 333 ms in 0.24-0.29). */
    static final long QUICHE_INITIAL_RTT_NANOS = 333_000_000L;
    static final long MIN_SAMPLE_NANOS = 5_000_000L;
    static final long MAX_SAMPLE_NANOS = 50_000_000L;

    private final Channel channel;
    private final NettyPacer pacer;
    private final WindowPacingRate rate = new WindowPacingRate(QUICHE_INITIAL_RTT_NANOS);
    private final RateDepartures departures = new RateDepartures(NettyPacer.EARLY_NANOS,
            NettyPacingHooks.MAX_LEAD_NANOS - 1); // as quiche's own send times: at most 100 ms ahead
    /** quiche paces this connection (a future send time, or its BBR), or window pacing failed: off for good. */
    private boolean off;
    private boolean samplePending;
    private long nextSampleAt;
    private boolean sampledOnce;
    private boolean announced;

    private NettyChannelPacing(Channel channel, NettyPacer pacer) {
        this.channel = channel;
        this.pacer = pacer;
    }

    /** The channel's pacing state, found once per channel (its parent's pipeline is searched once). */
    static NettyChannelPacing of(Object quicChannel) {
        Channel ch = (Channel) quicChannel;
        Attribute<NettyChannelPacing> a = ch.attr(KEY);
        NettyChannelPacing p = a.get();
        if (p == null) {
            Channel parent = ch.parent();
            ChannelHandler h = parent != null ? parent.pipeline().get(NettyPacer.NAME) : null;
            p = h instanceof NettyPacer ? new NettyChannelPacing(ch, (NettyPacer) h) : NO_PACER;
            a.set(p);
        }
        return p;
    }

    /** Whether the agent's pacer runs under this channel now (installed, not removed, its channel not closed). */
    boolean paced() {
        return pacer != null && pacer.live();
    }

    /** quiche gave this connection a future send time: quiche paces it, the window rule stands aside. */
    void quichePaces() {
        if (!off) {
            off = true;
            if (announced && AgentLog.enabled(AgentLog.Level.DEBUG)) {
                AgentLog.debug("netty window pacing off for " + channel + ": quiche sets its own send times");
            }
        }
    }

    /**
     * The send time of the datagram quiche just built for this channel when quiche gave it none: from the
     * window's rate, in [{@code now}, {@code now} + 100 ms); 0 when the connection is not window-paced (no
     * rate yet, quiche paces it, it failed). Asks for a path-stats sample when one is due (run later, on this
     * event loop).
     */
    long windowSendTime(long now) {
        if (off || pacer == null) {
            return 0;
        }
        if (!samplePending && now - nextSampleAt >= 0) {
            samplePending = true;
            nextSampleAt = now + MIN_SAMPLE_NANOS;
            try {
                channel.parent().eventLoop().execute(this); // the loop the QUIC channel runs on
            } catch (Throwable t) {
                off = true; // the loop refuses tasks (shutting down): not window-paced any more
                return 0;
            }
        }
        return rate.bytesPerSecond() > 0 ? departures.next(now) : 0;
    }

    /** The datagram {@link #windowSendTime} timed went to the pacer: the next one leaves after its gap. */
    void sent(long now, int bytes) {
        departures.sent(now, bytes, rate.bytesPerSecond());
    }

    /** The path-stats sample, on the connection's event loop. */
    @Override
    public void run() {
        samplePending = false;
        if (off) {
            return;
        }
        try {
            if (!channel.isOpen()) {
                off = true;
                return;
            }
            if (!sampledOnce) {
                sampledOnce = true;
                String algorithm = NettyConnections.quicheAlgorithmOf(channel);
                if (algorithm != null && algorithm.startsWith("bbr")) {
                    quichePaces(); // quiche's BBR paces itself; its first datagrams are due now as quiche says
                    return;
                }
            }
            Object stats = QuichePathStats.sample(channel);
            if (stats == null) {
                return; // not answered on this loop, or closed meanwhile: due now until the next sample
            }
            long now = System.nanoTime();
            long cwnd = QuichePathStats.field(channel, stats, QuichePathStats.CWND);
            long srtt = QuichePathStats.field(channel, stats, QuichePathStats.RTT);
            long lost = QuichePathStats.field(channel, stats, QuichePathStats.LOST);
            long sentBytes = QuichePathStats.field(channel, stats, QuichePathStats.SENT_BYTES);
            long r = rate.onSample(now, cwnd, srtt, lost, sentBytes);
            nextSampleAt = now + Math.max(MIN_SAMPLE_NANOS, Math.min(MAX_SAMPLE_NANOS, srtt / 4));
            if (r > 0 && !announced) {
                announced = true;
                if (AgentLog.enabled(AgentLog.Level.DEBUG)) {
                    AgentLog.debug("netty window pacing on for " + channel + " (quiche sets no send times): cwnd=" + cwnd
                            + " srttUs=" + srtt / 1000 + " rate=" + r + " B/s " + (rate.slowStart() ? "slow start 200%"
                            : "120%"));
                }
            }
        } catch (Throwable t) {
            off = true;
            AgentRuntime.recordFallback("netty window pacing", t);
        }
    }

    /** The rate now, bytes per second (0: not window-paced); tests. */
    long bytesPerSecond() {
        return off ? 0 : rate.bytesPerSecond();
    }
}
