package dev.ccagent.it.jfr;

import dev.ccagent.cc.AlgorithmDescriptor;
import dev.ccagent.cc.AlgorithmProvider;
import dev.ccagent.cc.CcSnapshot;
import dev.ccagent.cc.CongestionController;
import dev.ccagent.cc.OptionSpec;
import dev.ccagent.it.WrappedController;

import java.util.List;

/**
 * TEST ONLY, never in the product registry: the seed bug of quic-go issue 4054. Healthy (unpaced
 * NewReno) for the first {@code healthy-packets} packets, so that the handshake completes; then its
 * pacer "gets rate 0": {@link #pacingRate()} answers 0 and {@link #earliestSendTime} answers a time
 * already in the past although there is no budget. A sender that trusts it either ignores pacing or
 * spins; ccagent's adapter waits a minimum interval and counts the violation.
 *
 * <p>Injected through {@link AlgorithmProvider} (META-INF/services on the test class path).
 */
public final class FaultyZeroRate implements AlgorithmProvider {

    public static final String NAME = "faulty-zero-rate";

    @Override
    public List<AlgorithmDescriptor> algorithms() {
        return List.of(new AlgorithmDescriptor(NAME, "TEST ONLY: pacer rate collapses to 0, send times in the past",
                List.of(OptionSpec.integer("healthy-packets", 0, 1_000_000, "3", "1-RTT packets before the pacer breaks (the handshake completes first)")),
                o -> new Controller((int) o.getLong("healthy-packets"), WrappedController.unpacedNewReno(o))));
    }

    static final class Controller extends WrappedController {
        private final int healthy;
        private long sent;

        Controller(int healthy, CongestionController inner) {
            super(inner);
            this.healthy = healthy;
        }

        private boolean broken() {
            return sent >= healthy;
        }

        @Override public String algorithm() { return NAME; }

        @Override
        public void onPacketSent(long t, long pn, int bytes, long inFlight, boolean ackEliciting) {
            sent++;
            inner.onPacketSent(t, pn, bytes, inFlight, ackEliciting);
        }

        @Override
        public long pacingRate() {
            return broken() ? 0 : inner.pacingRate();
        }

        @Override
        public long earliestSendTime(long now, int bytes) {
            // rate 0: "time until budget" = bytes / 0 overflowed into the past (the seed bug)
            return broken() ? now - 1_000_000L : inner.earliestSendTime(now, bytes);
        }

        @Override
        public CcSnapshot snapshot(CcSnapshot into) {
            super.snapshot(into);
            into.pacingRate = pacingRate();
            return into;
        }
    }
}
