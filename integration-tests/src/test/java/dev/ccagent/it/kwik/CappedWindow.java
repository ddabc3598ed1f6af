package dev.ccagent.it.kwik;

import dev.ccagent.cc.AlgorithmDescriptor;
import dev.ccagent.cc.AlgorithmProvider;
import dev.ccagent.cc.CcSnapshot;
import dev.ccagent.cc.CongestionController;
import dev.ccagent.cc.OptionSpec;
import dev.ccagent.it.WrappedController;

import java.util.List;

/**
 * TEST ONLY, never in the product registry: a controller that is merely too cautious. It is our NewReno
 * (no pacing, like kwik's) whose window never exceeds {@code cap} bytes. On the guard tests' link (20 Mbit/s,
 * 20 ms, a one-BDP buffer of 50 kB) a window of 40 kB sends at most cap/RTT, about four fifths of the link,
 * while stock NewReno fills it: a goodput regression of about 20% with less loss and a shorter queue than
 * the baseline's, so that only the goodput test can see it ({@link KwikGuardPowerTest}).
 *
 * <p>Injected through {@link AlgorithmProvider} (META-INF/services on the test class path).
 */
public final class CappedWindow implements AlgorithmProvider {

    public static final String NAME = "capped-window";

    @Override
    public List<AlgorithmDescriptor> algorithms() {
        return List.of(new AlgorithmDescriptor(NAME, "TEST ONLY: NewReno with its window capped",
                List.of(OptionSpec.bytes("cap", 12_000, 64L << 20, "40kB", "the largest congestion window")),
                o -> new Controller(o.getLong("cap"), WrappedController.unpacedNewReno(o))));
    }

    static final class Controller extends WrappedController {
        private final long cap;

        Controller(long cap, CongestionController inner) {
            super(inner);
            this.cap = cap;
        }

        @Override public String algorithm() { return NAME; }
        @Override public long congestionWindow() { return Math.min(cap, inner.congestionWindow()); }

        @Override
        public CcSnapshot snapshot(CcSnapshot into) {
            super.snapshot(into);
            into.congestionWindow = congestionWindow();
            return into;
        }
    }
}
