package dev.ccagent.agent.netty;

import dev.ccagent.agent.AgentBenchmark;
import dev.ccagent.agent.config.AgentArgs;
import dev.ccagent.agent.connection.SendTelemetry;
import dev.ccagent.agent.runtime.AgentRuntime;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.AttributeKey;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * What spin detection adds on a Netty event loop, per call of the send-path hooks (issue 33 item 8): the
 * same hooks run with {@code detect=off} too, where each reads the configuration and returns; with
 * {@code detect=on} each also looks the connection up among the channel's attributes (Netty's own attribute
 * map on a real Netty channel, {@code EmbeddedChannel}, holding four other attributes: a served QUIC channel
 * holds up to three of the agent's own and whatever its application sets, and the map finds a key by binary
 * search, so their number weighs little) and counts. The channel here holds no agent connection, so the
 * lookup finds none and nothing is counted: {@link #countersOfOneSend} times those counters, on a real
 * {@link SendTelemetry}, separately. A loopback transfer's cost is then calls per MB (quiche's packet counts)
 * times the difference on − off.
 */
@State(Scope.Thread)
public class NettySendLoopTelemetryBenchmark extends AgentBenchmark {

    @Param({"on", "off"})
    public String detect;

    private EmbeddedChannel channel;
    private final SendTelemetry telemetry = new SendTelemetry("netty", false);

    @Setup(Level.Trial)
    public void start() {
        AgentRuntime.setConfig(AgentArgs.parse("cc=cubic;detect=" + detect).config());
        channel = new EmbeddedChannel();
        // other attributes, as an application sets them: the lookup is a binary search among them all
        for (int i = 0; i < 4; i++) {
            channel.attr(AttributeKey.valueOf("bench.attribute." + i)).set(i);
        }
        if (!NettyLinkage.linked(channel)) {
            throw new IllegalStateException("the hooks would skip this channel: nothing would be measured");
        }
    }

    @TearDown(Level.Trial)
    public void stop() {
        channel.finishAndReleaseAll();
        AgentRuntime.setConfig(null);
    }

    /** {@code QuicheQuicChannel.connectionSend}'s enter and exit advice, one turn of quiche's send loop. */
    @Benchmark
    public void sendLoopTurn() {
        NettySendLoopTelemetry.sendExit(channel, NettySendLoopTelemetry.sendEnter(channel));
    }

    /** {@code writePacket}'s advice: one datagram written. */
    @Benchmark
    public void datagramWritten() {
        NettySendLoopTelemetry.datagramWritten(channel);
    }

    /** {@code recv}'s advice: one datagram received. */
    @Benchmark
    public void datagramReceived() {
        NettySendLoopTelemetry.datagramReceived(channel);
    }

    /** The counters themselves, where the lookup finds the connection: a send-loop turn that writes one datagram. */
    @Benchmark
    public void countersOfOneSend() {
        long before = telemetry.loopEnter();
        telemetry.datagramSent();
        telemetry.loopExit(before);
    }
}
