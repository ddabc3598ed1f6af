package dev.ccagent.agent.kwik;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.instrument.Requirement;
import dev.ccagent.agent.runtime.AgentRuntime;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.matcher.ElementMatcher;

import java.util.List;

import static net.bytebuddy.matcher.ElementMatchers.named;

/**
 * kwik observe-only: where {@link KwikModule}'s controller swap cannot apply (kwik 0.10.0-0.10.3 lack
 * {@code RecoveryManager.congestionController}; an unknown future version may lack more), the CPU
 * spin detector still watches every connection. Its own requirement set is small: {@code SenderImpl}'s
 * constructor (to learn each new connection) and the two fields the detector reads
 * ({@code senderThread}, {@code dataSent}). The only advice is at the end of that constructor and
 * records the sender in a side table; nothing of kwik's behaviour changes.
 *
 * <p>It stands aside in every loader where the swap module applies (that module watches its
 * connections itself), and logs one line where it observes:
 * "... controller swap skipped (why); observing: spin detector (CPU without progress)".
 */
public final class KwikObserveModule extends KwikTargetModule {

    private final KwikModule swap;

    public KwikObserveModule(AgentConfig config, KwikModule swap) {
        this.swap = swap;
    }

    @Override
    protected List<Requirement> requirements() {
        return List.of(
                Requirement.type(KwikReflection.SENDER_IMPL)
                        .satisfies(KwikSenderConstructor::problem) // by parameter type, as the swap
                        .field("senderThread", "Ljava/lang/Thread;")
                        .field("dataSent", "J"),
                Requirement.agentType("dev.ccagent.agent.kwik.KwikObserveModule$Hooks"));
    }

    @Override
    protected boolean standsAsideIn(ClassLoader loader) {
        return swap.appliesTo(loader);
    }

    @Override
    protected String appliedVerdict(ClassLoader loader) {
        return "controller swap skipped (" + String.join("; ", swap.missingIn(loader))
                + "); observing: spin detector (CPU without progress); kwik's behaviour unchanged";
    }

    @Override
    public AgentBuilder extend(AgentBuilder builder, ElementMatcher<ClassLoader> loaderCheck) {
        return builder
                .type(KwikModule.typeThenLoader(named(KwikReflection.SENDER_IMPL), loaderCheck))
                .transform(KwikSenderConstructor.transformer(ConstructorAdvice.class));
    }

    /** Inlined at the end of SenderImpl's designated constructor (found by parameter type). */
    public static final class ConstructorAdvice {
        private ConstructorAdvice() {
        }

        @Advice.OnMethodExit(suppress = Throwable.class)
        static void exit(@Advice.This Object sender, @KwikSenderConstructor.Id String id) {
            Hooks.senderCreated(sender, id);
        }
    }

    /** What the advice calls (public: it runs inside kwik's class). */
    public static final class Hooks {
        private Hooks() {
        }

        public static void senderCreated(Object sender, String id) {
            try {
                KwikSpinWatch.track(sender, id, null);
            } catch (Throwable t) {
                AgentRuntime.recordFallback("kwik observe", "the connection runs kwik's own controller as it would"
                        + " without the agent; the spin watch does not track it", t);
            }
        }
    }
}
