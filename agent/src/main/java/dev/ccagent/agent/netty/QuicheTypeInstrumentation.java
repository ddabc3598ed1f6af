package dev.ccagent.agent.netty;

import dev.ccagent.agent.instrument.TypeInstrumentation;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

import static net.bytebuddy.matcher.ElementMatchers.named;

/**
 * A Netty QUIC type, named the same in both packages ({@code io.netty.handler.codec.quic} and the
 * incubator's): what the type instrumentations share, the type's name in one package and the
 * loader that holds their advice.
 */
abstract class QuicheTypeInstrumentation implements TypeInstrumentation {

    private final String typeName;

    QuicheTypeInstrumentation(String pkg, String simpleName) {
        this.typeName = pkg + "." + simpleName;
    }

    @Override
    public final ElementMatcher<? super TypeDescription> typeMatcher() {
        return named(typeName);
    }

    /** An advice transformer that reads the advice classes from the agent's own loader. */
    static AgentBuilder.Transformer.ForAdvice advice() {
        return new AgentBuilder.Transformer.ForAdvice().include(QuicheTypeInstrumentation.class.getClassLoader());
    }
}
