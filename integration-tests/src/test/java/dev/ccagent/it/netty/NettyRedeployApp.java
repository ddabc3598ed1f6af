package dev.ccagent.it.netty;

/**
 * The "web application" of {@code NettyRedeployTest} ({@link dev.ccagent.it.RedeployMain}): a Netty QUIC server
 * and client in one class loader ({@link NettyBulkApp}), one checksummed download from the first to the second
 * over 127.0.0.1, then every channel closed and the event loops shut down. Runs only inside the throw-away loader,
 * which also holds Netty with its native quiche library.
 */
public final class NettyRedeployApp {

    private NettyRedeployApp() {
    }

    /** Returns "ok BYTES" or "failed"; prints the quiche libraries mapped into the process ({@code NATIVE ...}). */
    public static String run(String keyStoreFile, long bytes) throws Exception {
        boolean ok = NettyBulkApp.run(new String[] {"keystore=" + keyStoreFile, "bytes=" + bytes, "connections=1"});
        System.out.println("NATIVE " + mappedQuicheLibraries());
        return ok ? "ok " + bytes : "failed";
    }

    /**
     * The files of Netty's quiche library mapped into this process, as the kernel lists them: Netty copies the
     * library to a file of its own for each class loader that loads it, so each deployment adds one.
     */
    static java.util.Set<String> mappedQuicheLibraries() throws java.io.IOException {
        java.util.Set<String> files = new java.util.TreeSet<>();
        for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/self/maps"))) {
            int at = line.indexOf('/');
            if (at >= 0 && line.contains("libnetty_quiche")) {
                files.add(line.substring(at).replace(" (deleted)", ""));
            }
        }
        return files;
    }
}
