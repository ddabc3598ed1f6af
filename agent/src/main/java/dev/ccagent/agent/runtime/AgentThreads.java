package dev.ccagent.agent.runtime;

/**
 * The agent's background threads, created so that they pin nothing of the application whatever
 * thread happens to start them (often a library's own thread, e.g. kwik's receiver thread at the
 * first connection): no context class loader, no inherited thread-locals, and the agent's own
 * access-control context instead of the caller's (a thread keeps the context it inherits, and with
 * it the protection domains, hence the class loaders, of every class on the creating stack).
 *
 * <p>Each is an {@link AgentThread}, whose {@code run()} is the agent's own method: the bottom frame of
 * a long-lived agent thread is never JDK code that applications share ({@code Thread.run()}, a pool's
 * {@code runWorker}), because the JIT compiles such shared code with whatever the application ran
 * through it inlined, and a compiled frame that stays on a stack keeps the objects its code embeds, and
 * with them their class loaders, reachable (see {@link AgentScheduler}).
 */
public final class AgentThreads {

    private AgentThreads() {
    }

    /** A daemon thread named {@code name} running {@code body}, not started. */
    public static Thread newDaemon(String name, Runnable body) {
        return newDaemon(null, name, body);
    }

    /** A daemon thread in {@code group} (null: the current thread's) named {@code name} running {@code body}, not started. */
    @SuppressWarnings("removal")
    public static Thread newDaemon(ThreadGroup group, String name, Runnable body) {
        Thread t = java.security.AccessController.doPrivileged(
                (java.security.PrivilegedAction<Thread>) () -> new AgentThread(group, body, name));
        t.setDaemon(true);
        t.setContextClassLoader(null);
        return t;
    }

    /** An agent thread: its {@code run()} is this class's, not {@code Thread}'s. */
    static final class AgentThread extends Thread {
        private final Runnable body;

        AgentThread(ThreadGroup group, Runnable body, String name) {
            super(group, null, name, 0, false);
            this.body = body;
        }

        @Override
        public void run() {
            body.run();
        }
    }
}
