package dev.ccagent.agent.control;

import java.util.Map;

/**
 * ccagent's management interface, registered as {@value Control#OBJECT_NAME} in the target JVM:
 * what {@code ccagent status} and {@code set} use, and what JConsole or JMC show.
 */
public interface ControlMXBean {

    /** The configuration new connections are assigned from, in the argument grammar; "" when detached. */
    String getConfiguration();

    /** The default arm, e.g. {@code newreno}, or {@code stock}. */
    String getDefaultAlgorithm();

    /** The canary arms, e.g. {@code bbr3:10%}, or "" when none. */
    String getCanarySplit();

    /** Connections assigned since start, per library, arm and algorithm. */
    Map<String, Long> getConnectionCounts();

    /** Times our code failed and a connection went on without that part of the agent (all causes). */
    long getFallbacks();

    /** Per cause (where, exception class): the count since start and what the connection did then. */
    String[] getFallbackCauses();

    /** Per target module: applied or skipped, with the library version and the reason. */
    String[] getModules();

    /** Spin, pacing and allocation alarms raised so far (newest last). */
    String[] getAlarms();

    /** CPU spin episodes still open: connection, thread, age, CPU share and progress so far, top frames. */
    String[] getOngoingSpins();

    /**
     * Stream stall episodes since the detector started: a stream that held data to send with no send
     * request queued, nothing in flight and no flow-control block for max(3 x PTO, 1 s) (the
     * {@code dev.ccagent.StreamStall} event; Prometheus {@code ccagent_stream_stalls_total}).
     */
    long getStreamStalls();

    /** Stream stall episodes still open: connection, stream, age, bytes waiting, whether the fix is on. */
    String[] getOngoingStreamStalls();

    /**
     * One line per canary arm seen so far (library, arm, algorithm, connections, bytes, loss, RTT,
     * fallbacks, alarms, and ROLLED BACK with the guard's evidence); the figures are also per-arm
     * MXBeans {@code dev.ccagent:type=Arm,...}.
     */
    String[] getArms();

    /** Whether new connections get our algorithms (false after detach). */
    boolean isActive();

    /**
     * Changes the configuration for new connections. {@code entries} uses the start-up grammar
     * ({@code cc=bbr1;canary=bbr3:50%}); keys not given keep their current value. Validated like
     * start-up arguments: on any problem nothing changes and the problems are thrown, one per line.
     * Refused: keys that name files ({@code config}, {@code jfr}, {@code profile-on-spin}) and keys that
     * only apply at install ({@code fix.kwik-stream-stall}, {@code fix.kwik-loss-timer}, {@code detect}, {@code targets},
     * {@code jfr.max-size}, {@code jfr.max-age}); and any call after {@link #detach()}. Concurrent
     * calls apply one after the other (none is lost). See docs/safety-control.md.
     *
     * @return the configuration now in force
     */
    String set(String entries);

    /** New connections get the stock algorithm again; instrumentation is removed where the JVM allows. */
    void detach();
}
