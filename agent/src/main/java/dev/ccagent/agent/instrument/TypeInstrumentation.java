package dev.ccagent.agent.instrument;

import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * One instrumented type of a {@link TargetModule}: its matcher and what is done to it (advice, member
 * substitution), in one file with its advice classes — the shape of OpenTelemetry's
 * {@code TypeInstrumentation}. The module applies it only where its requirement and linkage checks
 * hold, matching the type's name before it asks the class loader ({@link TargetModule#extend}).
 */
public interface TypeInstrumentation {

    /** The type (or types) this instruments, matched by name without loading anything. */
    ElementMatcher<? super TypeDescription> typeMatcher();

    /** Adds the transformations of the matched type. */
    AgentBuilder transform(AgentBuilder.Identified.Narrowable matched);
}
