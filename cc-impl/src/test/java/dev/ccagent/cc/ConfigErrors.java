package dev.ccagent.cc;

import org.junit.jupiter.api.function.Executable;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Assertions on the configuration errors of the registry and option parsing. */
public final class ConfigErrors {

    private ConfigErrors() {
    }

    /**
     * Asserts that {@code call} throws a {@link CcConfigException} whose message contains each of
     * {@code parts} (one assertion each, the message as its text); returns the exception.
     */
    public static CcConfigException assertRejected(Executable call, String... parts) {
        CcConfigException e = assertThrows(CcConfigException.class, call);
        for (String part : parts) {
            assertTrue(e.getMessage().contains(part), e.getMessage());
        }
        return e;
    }
}
