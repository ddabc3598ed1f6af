package dev.ccagent.it.kwik;

import java.lang.instrument.Instrumentation;

/**
 * TEST ONLY: a {@code -javaagent} (manifest-only jar, see {@link SafetyIt#timerKillerJar()}) that
 * kills the agent's pacing timer thread with {@link Thread#stop()}, as an uncaught error would: it
 * waits until the file named by its argument exists (the test creates it mid-transfer), then stops
 * every live thread named {@code ccagent-pacing-timer} it has not stopped yet, every 300 ms, at most
 * {@link #MAX_KILLS} times.
 * Each kill prints {@code KILLED <thread id>} on stdout. Thread.stop works up to Java 19; on a later
 * JDK it prints {@code KILL unsupported} and stops.
 */
public final class TimerKiller {

    static final int MAX_KILLS = 5;

    private TimerKiller() {
    }

    public static void premain(String args, Instrumentation inst) {
        java.nio.file.Path trigger = java.nio.file.Path.of(args);
        Thread t = new Thread(() -> run(trigger), "test-timer-killer");
        t.setDaemon(true);
        t.start();
    }

    @SuppressWarnings({"deprecation", "removal"})
    private static void run(java.nio.file.Path trigger) {
        try {
            for (int i = 0; i < 6000 && !java.nio.file.Files.exists(trigger); i++) {
                Thread.sleep(20);
            }
            java.util.Set<Long> killed = new java.util.HashSet<>();
            for (int round = 0; round < 200 && killed.size() < MAX_KILLS; round++) {
                for (Thread th : Thread.getAllStackTraces().keySet()) {
                    if (th.getName().equals("ccagent-pacing-timer") && th.isAlive() && killed.add(th.getId())) {
                        try {
                            th.stop();
                        } catch (UnsupportedOperationException e) {
                            System.out.println("KILL unsupported");
                            return;
                        }
                        System.out.println("KILLED " + th.getId());
                        System.out.flush();
                    }
                }
                Thread.sleep(300);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
