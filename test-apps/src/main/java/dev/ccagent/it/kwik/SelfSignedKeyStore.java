package dev.ccagent.it.kwik;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A throw-away EC P-256 certificate for {@code CN=localhost}, made with the running JDK's keytool. */
public final class SelfSignedKeyStore {

    public static final String ALIAS = "server";
    public static final char[] PASSWORD = "secret".toCharArray();

    private SelfSignedKeyStore() {
    }

    /** Generates a PKCS12 key store in a fresh temporary directory, loads it and deletes the files. */
    public static KeyStore create() throws IOException, GeneralSecurityException, InterruptedException {
        Path dir = Files.createTempDirectory("kwik-it-cert");
        Path file = dir.resolve("server.p12");
        try {
            generate(file);
            return load(file);
        } finally {
            Files.deleteIfExists(file);
            Files.deleteIfExists(dir);
        }
    }

    /** Writes a new PKCS12 key store to {@code file} (which must not exist) with the JDK's keytool. */
    public static void generate(Path file) throws IOException, InterruptedException {
        generate(file, "-keyalg", "EC", "-groupname", "secp256r1", "-sigalg", "SHA256withECDSA");
    }

    /**
     * As {@link #generate(Path)} with an RSA 2048 key, for servers whose PEM key reader takes RSA only (Flupke's
     * sample server through kwik's {@code withCertificate}).
     */
    public static void generateRsa(Path file) throws IOException, InterruptedException {
        generate(file, "-keyalg", "RSA", "-keysize", "2048", "-sigalg", "SHA256withRSA");
    }

    private static void generate(Path file, String... keyArgs) throws IOException, InterruptedException {
        Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        List<String> cmd = new java.util.ArrayList<>(List.of(keytool.toString(), "-genkeypair", "-alias", ALIAS));
        cmd.addAll(List.of(keyArgs));
        cmd.addAll(List.of("-dname", "CN=localhost", "-validity", "2", "-storetype", "PKCS12",
                "-keystore", file.toString(), "-storepass", new String(PASSWORD), "-keypass", new String(PASSWORD)));
        Process p = new ProcessBuilder(cmd)
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        try {
            if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IOException("keytool failed or timed out");
            }
        } finally {
            p.destroyForcibly();
        }
    }

    public static KeyStore load(Path file) throws IOException, GeneralSecurityException {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(file)) {
            ks.load(in, PASSWORD);
        }
        return ks;
    }
}
