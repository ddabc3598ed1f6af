package dev.ccagent.agent.netty;

import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;

/**
 * Test stand-in for Netty QUIC's public {@code QuicChannel} in this package: {@link NettyChannelPacing}
 * looks up {@code collectPathStats(int, Promise)} on the {@code QuicChannel} of the channel's package.
 */
public interface QuicChannel {
    Future<QuicConnectionPathStats> collectPathStats(int pathIdx, Promise<QuicConnectionPathStats> promise);
}
