package dev.ccagent.it;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;

/**
 * A test whose point is a measured figure (goodput or CPU ratios, churns of hundreds of connections,
 * A/A canaries, the real-kwik algorithm and version matrices): it runs in {@code mvn verify -Pacceptance},
 * not in the gate ({@code mvn verify}). Every capability keeps at least one end-to-end test in the gate;
 * docs/testing.md lists each capability with its gate test and its acceptance tests.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
@Tag(Acceptance.TAG)
public @interface Acceptance {
    /** The JUnit tag the build selects on (integration-tests/pom.xml). */
    String TAG = "acceptance";

    /** Why the test is a measurement rather than a gate test: the figure it measures. */
    String value();
}
