package dev.ccagent.it.netty;

/**
 * The arguments of the shaded-jar HTTP/3 servers (the Vert.x and Micronaut jars shade this class in):
 * {@code keystore=PKCS12 [port=P]}, port 0 (any) unless given. An unknown or missing argument is an
 * {@link IllegalArgumentException} naming it.
 */
public record ShadedJarArgs(String keystore, int port) {

    public static ShadedJarArgs parse(String[] args) {
        String keystore = null;
        int port = 0;
        for (String a : args) {
            if (a.startsWith("keystore=")) {
                keystore = a.substring("keystore=".length());
            } else if (a.startsWith("port=")) {
                port = Integer.parseInt(a.substring("port=".length()));
            } else {
                throw new IllegalArgumentException("unknown argument " + a + " (keystore=PKCS12 [port=P])");
            }
        }
        if (keystore == null) {
            throw new IllegalArgumentException("keystore=PKCS12 is required");
        }
        return new ShadedJarArgs(keystore, port);
    }
}
