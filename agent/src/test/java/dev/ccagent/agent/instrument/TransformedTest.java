package dev.ccagent.agent.instrument;

import org.junit.jupiter.api.Test;

import java.net.URL;
import java.net.URLClassLoader;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What {@link Transformed} reports as transformed across a detach and a later attach: the main
 * transformer's types are forgotten at detach, a fixes' transformer's types stay until that
 * transformer is removed, and a type its successor transformed since is not forgotten with it.
 */
class TransformedTest {

    @Test
    void fixesOutliveTheDetachAndBelongToTheTransformerThatLastFixedThem() throws Exception {
        try (URLClassLoader loader = new URLClassLoader("transformed-test", new URL[0], null)) {
            Object first = new Object();
            Object second = new Object();
            Transformed.note("a.Main", loader);
            Transformed.noteFix("a.Fixed", loader, first);
            Transformed.noteFix("a.FixedOnlyByTheFirst", loader, first);
            assertTrue(Transformed.in("a.Main", loader) && Transformed.in("a.Fixed", loader));

            Transformed.forget(); // detach: the main transformer's reset restored its classes
            assertFalse(Transformed.in("a.Main", loader), "the main transformer's type is restored");
            assertTrue(Transformed.in("a.Fixed", loader), "the fix stays");
            assertTrue(Transformed.fixes().stream().anyMatch(f -> f.startsWith("a.Fixed in transformed-test@")),
                    Transformed.fixes().toString());

            // a later attach: its transformer fixes a.Fixed again, then the first one is removed
            Transformed.noteFix("a.Fixed", loader, second);
            Transformed.forgetFixesOf(first);
            assertTrue(Transformed.in("a.Fixed", loader), "the successor's fix");
            assertFalse(Transformed.in("a.FixedOnlyByTheFirst", loader), "only the removed transformer held it");

            Transformed.forgetFixesOf(second);
            assertFalse(Transformed.in("a.Fixed", loader));
        }
    }
}
