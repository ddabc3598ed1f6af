package dev.ccagent.it.jfr;

import dev.ccagent.cc.AlgorithmDescriptor;
import dev.ccagent.cc.AlgorithmProvider;
import dev.ccagent.cc.CongestionController;
import dev.ccagent.cc.OptionSpec;
import dev.ccagent.it.WrappedController;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.List;

/**
 * TEST ONLY, never in the product registry: a busy loop inside one send iteration, a shape the
 * wake-up counters cannot see (no extra wake-ups, no send time in the past). Healthy NewReno for the
 * first {@code healthy-packets} data packets; then every data packet sent costs the sender thread
 * {@code burn-ms} of CPU time in {@link Controller#burn} (bounded by four times that in wall time), so
 * the connection crawls at a dozen kB per CPU second while its thread stays on the CPU; with
 * {@code spin-packets} above 0 only that many (retransmissions included), then it is healthy again (a spin of
 * bounded length, so that a test can have many).
 */
public final class BusySpin implements AlgorithmProvider {

    public static final String NAME = "busy-spin";

    @Override
    public List<AlgorithmDescriptor> algorithms() {
        return List.of(new AlgorithmDescriptor(NAME, "TEST ONLY: burns the sender's CPU on every data packet",
                List.of(OptionSpec.integer("healthy-packets", 0, 1_000_000, "20", "data packets before the loop starts"),
                        OptionSpec.integer("burn-ms", 1, 1_000, "100", "CPU time burned per data packet"),
                        OptionSpec.integer("spin-packets", 0, 1_000_000, "0", "data packets that burn, then healthy again (0: all)")),
                o -> new Controller((int) o.getLong("healthy-packets"), o.getLong("burn-ms") * 1_000_000L, o.getLong("spin-packets"),
                        WrappedController.unpacedNewReno(o))));
    }

    static final class Controller extends WrappedController {
        private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
        private final int healthy;
        private final long burnNanos;
        private final long spinPackets;
        private long dataPackets;
        private long sink;

        Controller(int healthy, long burnNanos, long spinPackets, CongestionController inner) {
            super(inner);
            this.healthy = healthy;
            this.burnNanos = burnNanos;
            this.spinPackets = spinPackets;
        }

        @Override public String algorithm() { return NAME; }

        @Override
        public void onPacketSent(long t, long pn, int bytes, long inFlight, boolean ackEliciting) {
            inner.onPacketSent(t, pn, bytes, inFlight, ackEliciting);
            if (bytes >= 1000 && ++dataPackets > healthy && (spinPackets == 0 || dataPackets <= healthy + spinPackets)) {
                burn();
            }
        }

        /** The busy loop: spins until this thread used {@code burnNanos} of CPU (or 4x that of wall time). */
        private void burn() {
            long cpuEnd = THREADS.getCurrentThreadCpuTime() + burnNanos;
            long wallEnd = System.nanoTime() + 4 * burnNanos;
            long x = sink;
            while (THREADS.getCurrentThreadCpuTime() < cpuEnd && System.nanoTime() < wallEnd) {
                for (int i = 0; i < 1000; i++) {
                    x = x * 6364136223846793005L + 1442695040888963407L;
                }
            }
            sink = x;
        }
    }
}
