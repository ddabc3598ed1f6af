package dev.ccagent.agent.runtime;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * A {@link Runnable} the JIT does not see through, for agent work that a long-lived JDK thread calls (JFR's
 * periodic hooks): it calls its body through a {@link MethodHandle} held in a plain field, which is not a
 * constant to the compiler, so the JDK thread's compiled loop inlines nothing of what the body reaches, in
 * particular no class of an application's loader (the agent's helpers there), whose constants would stay
 * reachable from that compiled frame for as long as the thread lives (see {@link AgentScheduler}).
 * Allocates nothing per call.
 */
public final class OpaqueRunnable implements Runnable {

    /** {@code Runnable.run()}, for {@link AgentScheduler} too. */
    static final MethodHandle RUN;

    static {
        try {
            RUN = MethodHandles.publicLookup().findVirtual(Runnable.class, "run", MethodType.methodType(void.class));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Runnable body;
    /** Not final: never folded into a constant by the JIT. */
    private MethodHandle runner = RUN;

    public OpaqueRunnable(Runnable body) {
        this.body = body;
    }

    @Override
    public void run() {
        try {
            runner.invokeExact(body);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t); // Runnable.run throws no checked exception
        }
    }
}
