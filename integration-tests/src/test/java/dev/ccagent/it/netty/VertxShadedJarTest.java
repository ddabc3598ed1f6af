package dev.ccagent.it.netty;

import dev.ccagent.it.Acceptance;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

/**
 * A Vert.x 5 HTTP/3 server packaged as Vert.x applications usually are: one uber jar made by
 * maven-shade-plugin ({@code vertx-shaded-app}), started with {@code java -jar}. Netty is unpacked into it,
 * so it sits on the application class path beside the agent: the flat case, packaged as users do. The
 * server keeps Vert.x's own congestion default. The checks of issue 21, from outside
 * ({@link PackagedHttp3Jar}): the algorithm switch at start by the emulator's queue, pacing by the same queue, and
 * arm metrics, close summaries and the Prometheus scrape. (Late attach to a packaged server is
 * {@code NettyBootJarTest}'s: the harder case, Netty in a child loader; on a flat class path it is
 * {@code NettyLateAttachTest}'s.)
 */
@Acceptance("goodput against stock and the queue paced against unpaced, in the Vert.x shaded jar")
class VertxShadedJarTest {

    private static final PackagedHttp3Jar JAR = new PackagedHttp3Jar("vertx-shaded-jar", "vertx.shaded.jar",
            keystore -> List.of("keystore=" + keystore));

    @Test
    @Timeout(300)
    void bbrAtStartPacesAndIsMeasuredAsOnAFlatClassPath() throws Exception {
        JAR.atStart();
    }
}
