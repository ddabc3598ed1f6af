package dev.ccagent.it.control;

/** A JVM that does nothing for the agent to run in: prints READY, exits when stdin closes (at most 3 minutes). */
public final class IdleMain {

    private IdleMain() {
    }

    public static void main(String[] args) throws Exception {
        System.out.println("READY " + ProcessHandle.current().pid());
        System.out.flush();
        Thread reader = new Thread(() -> {
            try {
                while (System.in.read() >= 0) {
                    // until the test closes stdin
                }
            } catch (java.io.IOException ignored) {
                // parent gone
            }
        }, "idle-stdin");
        reader.setDaemon(true);
        reader.start();
        reader.join(180_000);
    }
}
