package dev.ccagent.it.kwik;

import dev.ccagent.cc.AckEvent;
import dev.ccagent.cc.AlgorithmDescriptor;
import dev.ccagent.cc.AlgorithmProvider;
import dev.ccagent.cc.registry.Algorithms;
import dev.ccagent.cc.CongestionController;
import dev.ccagent.cc.LossEvent;
import dev.ccagent.cc.OptionSpec;
import dev.ccagent.it.WrappedController;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * TEST ONLY, never in the product registry (META-INF/services on the test class path): algorithms
 * that misbehave on purpose, to prove the agent's fail-open promises from outside.
 * <ul>
 *   <li>{@code faulty-throw}: healthy NewReno until {@code healthy-packets} 1-RTT packets were sent,
 *       then one kwik callback throws on every call. The n-th connection made in the JVM takes fault
 *       mode n mod {@link #MODES}: a callback ({@link #HOOKS}) times a kind of throwable
 *       ({@link #KINDS}: a RuntimeException, a LinkageError as after a jar replaced on disk, a real
 *       StackOverflowError from unbounded recursion). Each throw prints
 *       {@code FAULT mode=M hook=H kind=K} on stdout: a second line for one mode would mean the agent
 *       kept calling the broken controller.</li>
 *   <li>{@code detach-probe}: paced NewReno that counts every call the agent makes into it; a daemon
 *       thread prints {@code PROBE calls=N} on stdout every 200 ms once the first one exists. After
 *       a detach the count must stop while transfers continue.</li>
 * </ul>
 */
public final class SafetyAlgorithms implements AlgorithmProvider {

    static final String[] HOOKS = {"sent", "ack", "loss", "window", "pace"};
    static final String[] KINDS = {"runtime", "linkage", "stack"};
    static final int MODES = HOOKS.length * KINDS.length;

    private static final AtomicInteger NEXT_MODE = new AtomicInteger();
    static final AtomicLong PROBE_CALLS = new AtomicLong();
    private static final AtomicInteger PROBES = new AtomicInteger();

    @Override
    public List<AlgorithmDescriptor> algorithms() {
        return List.of(
                new AlgorithmDescriptor("faulty-throw", "TEST ONLY: throws from one callback mid-transfer",
                        List.of(OptionSpec.integer("healthy-packets", 0, 1_000_000, "200",
                                "1-RTT packets sent before the fault")),
                        o -> new Faulty(NEXT_MODE.getAndIncrement() % MODES, (int) o.getLong("healthy-packets"),
                                WrappedController.unpacedNewReno(o))),
                new AlgorithmDescriptor("detach-probe", "TEST ONLY: paced NewReno that counts the agent's calls",
                        List.of(), o -> {
                            startProbePrinter();
                            return new Probe(Algorithms.create("newreno",
                                    Map.of("mss", Integer.toString(o.mss()), "pacing", "on")));
                        }));
    }

    private static void startProbePrinter() {
        if (PROBES.getAndIncrement() == 0) {
            Thread t = new Thread(() -> {
                while (true) {
                    System.out.println("PROBE calls=" + PROBE_CALLS.get());
                    System.out.flush();
                    try {
                        Thread.sleep(200);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "detach-probe-printer");
            t.setDaemon(true);
            t.start();
        }
    }

    /** Throws from its mode's callback once healthy-packets 1-RTT packets were sent. */
    static final class Faulty extends WrappedController {
        private final int mode;
        private final String hook;
        private final String kind;
        private final int healthy;
        private long sent;

        Faulty(int mode, int healthy, CongestionController inner) {
            super(inner);
            this.mode = mode;
            this.hook = HOOKS[mode % HOOKS.length];
            this.kind = KINDS[mode / HOOKS.length];
            this.healthy = healthy;
        }

        private void maybeThrow(String where) {
            if (!where.equals(hook) || sent < healthy) {
                return;
            }
            System.out.println("FAULT mode=" + mode + " hook=" + hook + " kind=" + kind);
            System.out.flush();
            switch (kind) {
                case "runtime":
                    throw new IllegalStateException("test fault in " + hook);
                case "linkage":
                    throw new NoClassDefFoundError("test fault in " + hook + " (a class of a replaced jar)");
                default:
                    recurse(0); // a real StackOverflowError
            }
        }

        private static long recurse(long depth) {
            return recurse(depth + 1) + 1;
        }

        @Override public String algorithm() { return "faulty-throw"; }

        @Override
        public void onPacketSent(long t, long pn, int bytes, long inFlight, boolean ackEliciting) {
            sent++;
            maybeThrow("sent");
            inner.onPacketSent(t, pn, bytes, inFlight, ackEliciting);
        }

        @Override
        public void onAck(AckEvent ack) {
            maybeThrow("ack");
            inner.onAck(ack);
        }

        @Override
        public void onPacketsLost(LossEvent loss) {
            maybeThrow("loss");
            inner.onPacketsLost(loss);
        }

        @Override
        public long congestionWindow() {
            maybeThrow("window");
            return inner.congestionWindow();
        }

        @Override
        public long earliestSendTime(long now, int bytes) {
            maybeThrow("pace");
            return inner.earliestSendTime(now, bytes);
        }
    }

    /** Counts every call; otherwise the inner controller. */
    static final class Probe extends WrappedController {

        Probe(CongestionController inner) {
            super(inner);
        }

        @Override public String algorithm() { return "detach-probe"; }

        @Override
        public void onPacketSent(long t, long pn, int bytes, long inFlight, boolean ackEliciting) {
            PROBE_CALLS.incrementAndGet();
            inner.onPacketSent(t, pn, bytes, inFlight, ackEliciting);
        }

        @Override
        public void onAck(AckEvent ack) {
            PROBE_CALLS.incrementAndGet();
            inner.onAck(ack);
        }

        @Override
        public void onPacketsLost(LossEvent loss) {
            PROBE_CALLS.incrementAndGet();
            inner.onPacketsLost(loss);
        }

        @Override
        public long congestionWindow() {
            PROBE_CALLS.incrementAndGet();
            return inner.congestionWindow();
        }

        @Override
        public long earliestSendTime(long now, int bytes) {
            PROBE_CALLS.incrementAndGet();
            return inner.earliestSendTime(now, bytes);
        }
    }
}
