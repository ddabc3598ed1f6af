# Sourced by the benchmark scripts that run NettyBulkApp (from the repository root, after mvn -B -q install
# -DskipTests): NETTY_BULK_CP, its class path (the test application, the emulator, the link model and Netty
# 4.2.17's jars), and netty_bulk_keystore DIR, which writes the EC key store DIR/server.p12 (password changeit)
# that NettyBulkApp's keystore= argument takes.
NETTY_BULK_CP=$(pwd)/test-apps/target/classes:$(pwd)/emulator/target/classes:$(pwd)/link-model/target/classes:$(ls $(pwd)/test-apps/netty-jars/netty-current/target/jars/*.jar | tr '\n' ':')
netty_bulk_keystore() {
  keytool -genkeypair -alias server -keyalg EC -groupname secp256r1 -sigalg SHA256withECDSA -dname CN=localhost \
    -storetype PKCS12 -keystore "$1/server.p12" -storepass changeit -keypass changeit -validity 2 >/dev/null 2>&1
}
