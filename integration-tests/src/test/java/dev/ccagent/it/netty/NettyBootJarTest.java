package dev.ccagent.it.netty;

import dev.ccagent.it.Acceptance;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

/**
 * Netty QUIC inside a Spring Boot executable jar ({@code netty-boot-app}: a WebFlux application serving
 * HTTP/3 through Reactor Netty, Netty and its linux-x86_64 quiche in {@code BOOT-INF/lib}, so Spring Boot's
 * {@code LaunchedClassLoader} defines them, a child of the application class loader the agent lives in),
 * started with {@code java -jar}. The checks of issue 21, from outside ({@link PackagedHttp3Jar}): the
 * algorithm switch at start and by late attach by the emulator's queue, pacing by the same queue, and arm
 * metrics, close summaries and the Prometheus scrape as on a flat class path.
 */
@Acceptance("goodput against stock, the bottleneck queue before and after a late attach, and the queue paced against unpaced, in the Spring Boot jar")
class NettyBootJarTest {

    private static final PackagedHttp3Jar JAR = new PackagedHttp3Jar("netty-boot-jar", "netty.boot.jar",
            keystore -> List.of("--keystore=" + keystore));

    @Test
    @Timeout(300)
    void bbrByLateAttachReachesNewConnections() throws Exception {
        JAR.lateAttach();
    }

    @Test
    @Timeout(300)
    void bbrAtStartPacesAndIsMeasuredAsOnAFlatClassPath() throws Exception {
        JAR.atStart();
    }
}
