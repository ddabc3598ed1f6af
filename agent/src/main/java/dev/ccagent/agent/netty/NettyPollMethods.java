package dev.ccagent.agent.netty;

import java.util.List;

/**
 * The calls in which a Netty event loop waits for I/O (its poll), by transport: Netty's epoll and kqueue
 * natives, the JDK's selectors under NIO. A loop burning CPU with most stack samples in one of them returns
 * from its poll without work (as CVE-2026-42577 makes epoll on Netty 4.2.0-4.2.12). Shared by both of the
 * CPU spin monitor's Netty sources ({@link NettyConnections} with the algorithm choice, {@link NettyObserveWatch}
 * observe-only); it names no Netty type, so the observe-only watch can use it from the agent's own loader.
 */
final class NettyPollMethods {

    static final List<String> METHODS = List.of("channel.epoll.Native.epollWait0", "channel.epoll.Native.epollWait",
            "channel.epoll.Native.epollBusyWait0", "channel.kqueue.Native.keventWait", "sun.nio.ch.EPoll.wait",
            "sun.nio.ch.KQueue.poll", "sun.nio.ch.WEPoll.wait");

    private NettyPollMethods() {
    }
}
