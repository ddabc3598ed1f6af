package dev.ccagent.it.netty;

import dev.ccagent.it.emulator.LinkEmulator;
import dev.ccagent.it.emulator.LinkProfile;

import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * What the framework applications ({@code src/frameworks}: {@code ReactorHttp3App}, {@code VertxHttp3App})
 * share around their own server and client code: the {@code key=value} arguments, the link emulator in front
 * of the server ({@code link=RATE,DELAY_MS,BDP,LOSS}), the server's key from {@code keystore=}, and the lines they print ({@code RESULT},
 * {@code FAILED}, {@code EMULATOR}, {@code DONE}). Uses only the emulator and the JDK, so that it compiles
 * once here and serves both (each framework app is compiled by the tests against its own jars).
 */
final class FrameworkApp {

    private FrameworkApp() {
    }

    /** The server's key and certificate: a PKCS12 key store's entry {@code localhost}, password {@code changeit}. */
    record ServerKey(PrivateKey key, X509Certificate certificate) {
    }

    static ServerKey serverKey(String keystore) throws Exception {
        char[] pass = "changeit".toCharArray();
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(Path.of(keystore))) {
            ks.load(in, pass);
        }
        return new ServerKey((PrivateKey) ks.getKey("localhost", pass), (X509Certificate) ks.getCertificate("localhost"));
    }

    /** The {@code key=value} arguments. */
    static Map<String, String> arguments(String[] args) {
        Map<String, String> a = new HashMap<>();
        for (String s : args) {
            int eq = s.indexOf('=');
            a.put(s.substring(0, eq), s.substring(eq + 1));
        }
        return a;
    }

    /**
     * A link emulator in front of {@code server} as {@code link=RATE,DELAY_MS,BDP,LOSS} asks (the loss on the
     * way to the client), with {@code seed}; null without {@code link=}.
     */
    static LinkEmulator emulator(Map<String, String> a, InetSocketAddress server, long seed) {
        if (!a.containsKey("link")) {
            return null;
        }
        String[] l = a.get("link").split(",");
        long rate = Long.parseLong(l[0]);
        long delay = Long.parseLong(l[1]) * 1_000_000L;
        double bdp = Double.parseDouble(l[2]);
        double loss = Double.parseDouble(l[3]);
        return LinkEmulator.start(server,
                LinkProfile.builder().rate(rate).delay(delay).bufferBdp(bdp, 2 * delay).build(),
                LinkProfile.builder().rate(rate).delay(delay).bufferBdp(bdp, 2 * delay).loss(loss).build(), seed);
    }

    /** One download's {@code RESULT} line. */
    static void printResult(int connection, Object status, long bytes, boolean crcOk, double seconds) {
        System.out.printf(Locale.ROOT, "RESULT conn=%d status=%s bytes=%d crcOk=%b seconds=%.3f mbps=%.2f%n",
                connection, status, bytes, crcOk, seconds, bytes * 8 / seconds / 1e6);
    }

    /** The {@code FAILED} line with the stack trace. */
    static void printFailure(Throwable t) {
        System.out.println("FAILED " + t);
        t.printStackTrace(System.out);
    }

    /** Prints the emulator's {@code EMULATOR toClient} statistics and closes it (nothing when null). */
    static void closeEmulator(LinkEmulator emulator) {
        if (emulator != null) {
            System.out.println("EMULATOR toClient " + emulator.toClientStats());
            emulator.close();
        }
    }

    /** Prints {@code DONE ok=} and exits with 0 when {@code ok}, else 1. */
    static void exit(boolean ok) {
        System.out.println("DONE ok=" + ok);
        System.out.flush();
        System.exit(ok ? 0 : 1);
    }
}
