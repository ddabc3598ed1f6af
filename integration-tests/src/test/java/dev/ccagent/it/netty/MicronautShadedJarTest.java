package dev.ccagent.it.netty;

import dev.ccagent.it.Acceptance;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

/**
 * A Micronaut 4 HTTP/3 server packaged as Micronaut's Maven applications are: one shaded executable jar
 * ({@code micronaut-shaded-app}: a controller on Micronaut's Netty server with a {@code QUIC} listener, Netty's
 * HTTP/3 codec and its linux-x86_64 quiche), started with {@code java -jar}. Netty is unpacked into it, so it
 * sits on the application class path beside the agent, as in the Vert.x jar, but it is Micronaut that builds
 * the QUIC codec and its pipeline. The server keeps Micronaut's own congestion default. The checks of issue 21,
 * from outside ({@link PackagedHttp3Jar}), as for the Spring Boot jar: the algorithm switch at start and by late
 * attach by the emulator's queue, pacing by the same queue, and arm metrics, close summaries, path-stats samples
 * and the Prometheus scrape from the recording and the exporter.
 */
@Acceptance("the bottleneck queue before and after a late attach, and the queue paced against unpaced, in the Micronaut shaded jar")
class MicronautShadedJarTest {

    private static final PackagedHttp3Jar JAR = new PackagedHttp3Jar("micronaut-shaded-jar", "micronaut.shaded.jar",
            keystore -> List.of("keystore=" + keystore));

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
