package dev.ccagent.it.jfr;

import java.time.Duration;

/**
 * {@link BulkClient} in its own JVM, run with the agent only for {@code fix.kwik-stream-stall=on}
 * (kwik's stream-send race can leave a client's first write unsent until the idle timeout).
 * Prints "connected" when the handshake is done and "answered N" at the end.
 */
public final class BulkClientMain {

    public static void main(String[] args) throws Exception {
        long answered = BulkClient.transfer(Integer.parseInt(args[0]), Long.parseLong(args[1]),
                Integer.parseInt(args[2]), Duration.ofSeconds(Long.parseLong(args[3])), () -> {
                    System.out.println("connected");
                    System.out.flush();
                });
        System.out.println("answered " + answered);
        System.out.flush();
        System.exit(0);
    }
}
