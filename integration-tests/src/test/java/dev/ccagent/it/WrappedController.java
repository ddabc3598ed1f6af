package dev.ccagent.it;

import dev.ccagent.cc.AckEvent;
import dev.ccagent.cc.CcOptions;
import dev.ccagent.cc.CcSnapshot;
import dev.ccagent.cc.CongestionController;
import dev.ccagent.cc.LossEvent;
import dev.ccagent.cc.registry.Algorithms;

import java.util.Map;

/**
 * TEST ONLY: the base of the test-only controllers that are a real one with one fault or probe ({@code BusySpin},
 * {@code FaultyZeroRate}, {@code CappedWindow}, {@code SafetyAlgorithms}' two): every call goes to {@code inner};
 * a subclass overrides what it breaks or counts. Its snapshot is the inner one's under the subclass's name.
 */
public abstract class WrappedController implements CongestionController {

    protected final CongestionController inner;

    protected WrappedController(CongestionController inner) {
        this.inner = inner;
    }

    /** Our NewReno without pacing (as kwik's own controller), at the connection's MSS: what the faults wrap. */
    public static CongestionController unpacedNewReno(CcOptions options) {
        return Algorithms.create("newreno", Map.of("mss", Integer.toString(options.mss()), "pacing", "off"));
    }

    @Override public void onPacketSent(long t, long pn, int bytes, long inFlight, boolean ackEliciting) {
        inner.onPacketSent(t, pn, bytes, inFlight, ackEliciting);
    }
    @Override public void onAck(AckEvent ack) { inner.onAck(ack); }
    @Override public void onPacketsLost(LossEvent loss) { inner.onPacketsLost(loss); }
    @Override public void onAppLimited(long t, long inFlight) { inner.onAppLimited(t, inFlight); }
    @Override public long congestionWindow() { return inner.congestionWindow(); }
    @Override public long pacingRate() { return inner.pacingRate(); }
    @Override public long earliestSendTime(long now, int bytes) { return inner.earliestSendTime(now, bytes); }

    @Override
    public CcSnapshot snapshot(CcSnapshot into) {
        inner.snapshot(into);
        into.algorithm = algorithm();
        return into;
    }
}
