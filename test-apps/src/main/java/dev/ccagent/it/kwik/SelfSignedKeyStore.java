package dev.ccagent.it.kwik;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.Base64;
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

    /**
     * A self-signed RSA certificate and its PKCS#8 key as PEM files {@code dir/cert.pem} and {@code dir/key.pem}
     * (returned in that order), the form C servers and Flupke's sample server read (its key reader takes RSA keys
     * only); made by {@link #generateRsa}, whose key store is deleted again.
     */
    public static Path[] generateRsaPem(Path dir) throws IOException, InterruptedException, GeneralSecurityException {
        Path p12 = dir.resolve("server-rsa.p12");
        Files.deleteIfExists(p12);
        generateRsa(p12);
        KeyStore ks = load(p12);
        Base64.Encoder b64 = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII));
        Path cert = dir.resolve("cert.pem");
        Path key = dir.resolve("key.pem");
        Files.writeString(cert, "-----BEGIN CERTIFICATE-----\n" + b64.encodeToString(ks.getCertificate(ALIAS).getEncoded())
                + "\n-----END CERTIFICATE-----\n");
        Files.writeString(key, "-----BEGIN PRIVATE KEY-----\n" + b64.encodeToString(ks.getKey(ALIAS, PASSWORD).getEncoded())
                + "\n-----END PRIVATE KEY-----\n");
        Files.delete(p12);
        return new Path[] {cert, key};
    }

    public static KeyStore load(Path file) throws IOException, GeneralSecurityException {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(file)) {
            ks.load(in, PASSWORD);
        }
        return ks;
    }
}
