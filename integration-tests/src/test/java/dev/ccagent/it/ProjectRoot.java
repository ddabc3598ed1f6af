package dev.ccagent.it;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** The project's root directory, for the tests that read its sources and docs (the tables they check). */
public final class ProjectRoot {

    private ProjectRoot() {
    }

    /** From Maven's {@code it.sources} ({@code <root>/test-apps/src/main/java}); fails the test when it is not set. */
    public static Path get() {
        String sources = System.getProperty("it.sources");
        assertTrue(sources != null, "system property it.sources is not set (run through Maven)");
        return Path.of(sources).toAbsolutePath().getParent().getParent().getParent().getParent();
    }
}
