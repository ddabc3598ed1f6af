package dev.ccagent.agent.netty;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The observe-only watch's reading of a connection id from a {@code QuicConnectionAddress}'s text. */
class NettyObserveWatchTest {

    @Test
    void theConnectionIdIsTheFirstRunOfSixteenOrMoreHexDigits() {
        assertEquals("91c0874c37406f36305945d4f18c6a9db1d9a040",
                NettyObserveWatch.connectionId("QuicConnectionAddress{connId=91C0874C37406F36305945D4F18C6A9DB1D9A040}"));
        assertEquals("0123456789abcdef", NettyObserveWatch.connectionId("0123456789abcdef"));
        assertEquals("0123456789abcdef0", NettyObserveWatch.connectionId("id 1234 then 0123456789abcdef0"));
        assertEquals("", NettyObserveWatch.connectionId("QuicConnectionAddress{connId=0123456789abcde}"), "15 digits");
        assertEquals("", NettyObserveWatch.connectionId(null));
    }
}
