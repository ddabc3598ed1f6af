package dev.ccagent.agent.netty;

import java.nio.ByteBuffer;

/**
 * The static entry points Netty QUIC's instrumented code calls (advice is inlined into Netty's
 * classes, so these are public; {@link NettyModule} names them). Each delegates to the class that
 * does one job: the application's config settings ({@link NettyConfigs}), the algorithm choice of a
 * new connection ({@link NettyAlgorithmChoice}), the pacing glue ({@link NettyPacingHooks}) and the
 * send-loop counters ({@link NettySendLoopTelemetry}). Everything but the native call itself catches
 * everything: on any problem the connection gets the application's own settings.
 *
 * <p>No Netty type appears in a signature here: the same hooks serve {@code io.netty.handler.codec.quic}
 * and {@code io.netty.incubator.codec.quic}; package-specific natives are reached through
 * {@link NettyQuiche}, resolved from the calling class.
 */
public final class NettyHooks {

    private static final StackWalker WALKER = StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE);

    private NettyHooks() {
    }

    /**
     * Whether the test-only fault switch {@code -Dccagent.test.netty-fail=FAULT[,FAULT...]} names {@code fault}
     * ({@link NettyAlgorithmChoice}: {@code selection}, {@code accounting}; {@link NettyPacer}: {@code pacer-wakeup},
     * {@code send-loop-hold}). Each caller reads it once, into a constant.
     */
    static boolean testFault(String fault) {
        String faults = System.getProperty("ccagent.test.netty-fail");
        return faults != null && java.util.Arrays.asList(faults.split(",")).contains(fault);
    }

    /** After {@code QuicheConfig}'s constructor: remembers the application's settings of that native config. */
    public static void onConfig(Class<?> configClass, long address, Boolean hystart, Object cc, Integer cwnd) {
        NettyConfigs.onConfig(configClass, address, hystart, cc, cwnd);
    }

    /** At the start of {@code QuicheConfig.free()}: the native config goes away, and so does what we kept of it. */
    public static void onConfigFreed(long address) {
        NettyConfigs.onConfigFreed(address);
    }

    /** Replaces {@code Quiche.quiche_conn_new_with_tls} in QuicheQuicServerCodec and QuicheQuicChannel. */
    public static long connNew(long scid, int scidLen, long ocid, int ocidLen, long local, int localLen, long peer,
                               int peerLen, long config, long ssl, boolean server) throws Throwable {
        // the caller is Netty's class, whose package's natives the connection is created with
        return NettyAlgorithmChoice.connNew(WALKER.getCallerClass(), scid, scidLen, ocid, ocidLen, local, localLen,
                peer, peerLen, config, ssl, server);
    }

    /** Replaces {@code Quiche.quiche_conn_new_with_tls_and_client_dcid} (Netty 4.2.11+, clients). */
    public static long connNewClientDcid(long scid, int scidLen, long dcid, int dcidLen, long local, int localLen,
                                         long peer, int peerLen, long config, long ssl) throws Throwable {
        return NettyAlgorithmChoice.connNewClientDcid(WALKER.getCallerClass(), scid, scidLen, dcid, dcidLen, local,
                localLen, peer, peerLen, config, ssl);
    }

    /** After {@code handleServer} returns (a new or existing channel, or null) and after {@code connectNow}. */
    public static void onChannel(Object channel) {
        NettyAlgorithmChoice.onChannel(channel);
    }

    /** After {@code QuicheQuicCodec.handlerAdded(ctx)}: puts the pacer between the socket and the codec. */
    public static void onCodecAdded(Object ctx) {
        NettyPacingHooks.onCodecAdded(ctx);
    }

    /** After {@code QuicheQuicConnection.nextSendInfo()}: quiche fills this buffer for the datagram it writes next. */
    public static void onSendInfo(ByteBuffer sendInfo) {
        NettyPacingHooks.onSendInfo(sendInfo);
    }

    /** Before {@code QuicheQuicChannel.writePacket}: true when the pacer will hold this datagram (see {@link NettyPacingHooks#holdSendLoop}). */
    public static boolean holdSendLoop(Object channel) {
        return NettyPacingHooks.holdSendLoop(channel);
    }

    /** Before {@code QuicheQuicChannel.connectionSend}: true to skip it while a paced datagram of this channel is held. */
    public static boolean skipSend(Object channel) {
        return NettyPacingHooks.skipSend(channel);
    }

    /** The {@code SendResult.NONE} constant of the calling package (what a skipped connectionSend answers). */
    public static Object sendResultNone(Class<?> channelClass) {
        return NettyPacingHooks.sendResultNone(channelClass);
    }

    /** Start of {@code connectionSend} that runs: the datagram count to compare at its end, or -1. */
    public static long sendEnter(Object channel) {
        return NettySendLoopTelemetry.sendEnter(channel);
    }

    /** End of a {@code connectionSend} that ran (also when it threw). */
    public static void sendExit(Object channel, long datagramsBefore) {
        NettySendLoopTelemetry.sendExit(channel, datagramsBefore);
    }

    /** {@code writePacket}: a datagram from quiche's send loop goes to the UDP channel. */
    public static void datagramWritten(Object channel) {
        NettySendLoopTelemetry.datagramWritten(channel);
    }

    /** {@code recv}: a datagram for this connection. */
    public static void datagramReceived(Object channel) {
        NettySendLoopTelemetry.datagramReceived(channel);
    }

    /**
     * Start of {@code QuicheQuicChannel.doClose()}: this thread frees that channel's quiche connection
     * next. Answers what {@link #closed} restores: the channel named before, or {@link #NOT_NAMED} when
     * this channel's Netty is not linked (the path-stats feature does not run there).
     */
    public static Object closing(Object channel) {
        try {
            return NettyLinkage.linked(channel) ? NettyConnections.closing(channel) : NOT_NAMED;
        } catch (Throwable t) {
            return NOT_NAMED;
        }
    }

    /** End of {@code doClose()}: what {@link #closing} answered. */
    public static void closed(Object previous) {
        if (previous != NOT_NAMED) {
            NettyConnections.closed(previous);
        }
    }

    /** Start of {@code QuicheQuicConnection.free()}: the closing channel's last path-stats sample. */
    public static void beforeFree() {
        NettyConnections.beforeFree();
    }

    /** What {@link #closing} answers for a channel it did not name. */
    private static final Object NOT_NAMED = new Object();
}
