package dev.ccagent.it.kwik;

import dev.ccagent.cc.AckEvent;
import dev.ccagent.cc.AlgorithmDescriptor;
import dev.ccagent.cc.AlgorithmProvider;
import dev.ccagent.cc.CcSnapshot;
import dev.ccagent.cc.CongestionController;
import dev.ccagent.cc.CongestionMode;
import dev.ccagent.cc.LossEvent;
import dev.ccagent.cc.OptionSpec;

import java.util.List;

/**
 * TEST ONLY, never in the product registry: a controller that ignores the network. It keeps a fixed
 * window of {@code window} bytes whatever is lost, and does not pace: on a path with a one-BDP buffer
 * it overflows the queue on every flight, so its connections lose far more than the baseline's, which
 * is what the guardrail must notice ({@link KwikGuardTest}). Data still arrives intact (QUIC
 * retransmits), only wastefully.
 *
 * <p>Injected through {@link AlgorithmProvider} (META-INF/services on the test class path).
 */
public final class FaultyFlood implements AlgorithmProvider {

    public static final String NAME = "faulty-flood";

    @Override
    public List<AlgorithmDescriptor> algorithms() {
        return List.of(new AlgorithmDescriptor(NAME, "TEST ONLY: fixed window, no pacing, ignores loss",
                List.of(OptionSpec.bytes("window", 12_000, 64L << 20, "1MiB", "the fixed congestion window")),
                o -> new Controller(o.getLong("window"))));
    }

    static final class Controller implements CongestionController {
        private final long window;
        private long acked;
        private long lost;

        Controller(long window) {
            this.window = window;
        }

        @Override public String algorithm() { return NAME; }
        @Override public void onPacketSent(long t, long pn, int bytes, long inFlight, boolean ackEliciting) { }
        @Override public void onAck(AckEvent ack) { acked += ack.totalBytes(); }
        @Override public void onPacketsLost(LossEvent loss) { lost += loss.count(); }
        @Override public void onAppLimited(long t, long inFlight) { }
        @Override public long congestionWindow() { return window; }
        /** 1 GB/s: never 0 (0 means "unknown" to the pacer contract), never a limit. */
        @Override public long pacingRate() { return 1_000_000_000L; }
        @Override public long earliestSendTime(long now, int bytes) { return now; }

        @Override
        public CcSnapshot snapshot(CcSnapshot into) {
            into.algorithm = NAME;
            into.mode = CongestionMode.CONGESTION_AVOIDANCE;
            into.congestionWindow = window;
            into.pacingRate = pacingRate();
            into.bytesAcked = acked;
            into.packetsLost = lost;
            return into;
        }
    }
}
