package dev.ccagent.cc;

import dev.ccagent.cc.registry.Algorithms;
import dev.ccagent.cc.reno.NewReno;

import java.util.List;
import java.util.Map;

/** Registered through META-INF/services in the test class path: one new algorithm and one clash. */
public final class TestAlgorithmProvider implements AlgorithmProvider {

    @Override
    public List<AlgorithmDescriptor> algorithms() {
        return List.of(
                new AlgorithmDescriptor("test-provided", "NewReno under another name (tests the provider hook)",
                        List.of(), o -> new Renamed("test-provided", Algorithms.create("newreno",
                                Map.of("mss", Integer.toString(o.mss()))))),
                new AlgorithmDescriptor(NewReno.NAME, "clashes with the built-in", List.of(),
                        o -> { throw new AssertionError("a clashing provider algorithm must never be used"); }));
    }

    /** Delegates everything, reporting another name. */
    static final class Renamed implements CongestionController {
        private final String name;
        private final CongestionController d;

        Renamed(String name, CongestionController d) {
            this.name = name;
            this.d = d;
        }

        @Override public String algorithm() { return name; }
        @Override public void onPacketSent(long t, long pn, int b, long f, boolean e) { d.onPacketSent(t, pn, b, f, e); }
        @Override public void onAck(AckEvent ack) { d.onAck(ack); }
        @Override public void onPacketsLost(LossEvent loss) { d.onPacketsLost(loss); }
        @Override public void onAppLimited(long t, long f) { d.onAppLimited(t, f); }
        @Override public long congestionWindow() { return d.congestionWindow(); }
        @Override public long pacingRate() { return d.pacingRate(); }
        @Override public long earliestSendTime(long now, int bytes) { return d.earliestSendTime(now, bytes); }

        @Override
        public CcSnapshot snapshot(CcSnapshot into) {
            d.snapshot(into);
            into.algorithm = name;
            return into;
        }
    }
}
