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
 * ({@code senderThread}, {@code dataSent}). Its advice is at the end of that constructor and
 * records the sender in a side table; nothing of kwik's behaviour changes.
 *
 * <p>Where the send-loop window's hooks have their requirements too ({@link #WINDOW}: {@link KwikObserveSenderLoop},
 * {@link KwikObserveController}, {@link KwikObserveStreamPulls}), the window detector watches the same connections
 * ({@code SendLoopSpin}, {@code AckOnlySendLoop}, {@code SendPathAllocation}; see {@link KwikObserveTelemetry});
 * where they do not, the line says which is missing and the spin detector watches alone. Those hooks only count
 * (no allocation, no lock on the sender thread) and change nothing of kwik's behaviour either.
 *
 * <p>It stands aside in every loader where the swap module applies (that module watches its
 * connections itself), and logs one line where it observes:
 * "... controller swap skipped (why); observing: spin detector (CPU without progress), send-loop window (...)".
 */
public final class KwikObserveModule extends KwikTargetModule {

    /** What the send-loop window's hooks need, beside this module's own requirements. */
    static final List<Requirement> WINDOW = List.of(KwikObserveSenderLoop.REQUIREMENT, KwikObserveController.REQUIREMENT,
            KwikObserveController.PACKET, KwikObserveStreamPulls.REQUIREMENT,
            Requirement.agentType("dev.ccagent.agent.kwik.KwikObserveTelemetry"));

    static final String SPIN = "spin detector (CPU without progress)";
    static final String WINDOW_EVENTS = "send-loop window (SendLoopSpin, AckOnlySendLoop, SendPathAllocation)";

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
        List<String> window;
        try {
            window = Requirement.missingIn(WINDOW, loader);
        } catch (RuntimeException | LinkageError e) {
            window = List.of("the check itself failed: " + e);
        }
        if (window.isEmpty()) {
            KwikObserveTelemetry.windowIn(loader); // before any hook of this loader runs: its types are not transformed yet
        }
        return verdict(swap.missingIn(loader), window);
    }

    /** The line's verdict: why the swap is skipped, and what is observed (the window, or why not). */
    static String verdict(List<String> swapMissing, List<String> windowMissing) {
        String observing = windowMissing.isEmpty() ? SPIN + ", " + WINDOW_EVENTS
                : SPIN + " (send-loop window not observed: " + String.join("; ", windowMissing) + ")";
        return "controller swap skipped (" + String.join("; ", swapMissing) + "); observing: " + observing
                + "; kwik's behaviour unchanged";
    }

    @Override
    public AgentBuilder extend(AgentBuilder builder, ElementMatcher<ClassLoader> loaderCheck) {
        AgentBuilder b = builder
                .type(KwikModule.typeThenLoader(named(KwikReflection.SENDER_IMPL), loaderCheck))
                .transform(KwikSenderConstructor.transformer(ConstructorAdvice.class));
        // the send-loop window's hooks, only where their own requirements hold (decided with this module's verdict)
        ElementMatcher<ClassLoader> window = l -> loaderCheck.matches(l) && KwikObserveTelemetry.windowApplies(l);
        b = KwikObserveSenderLoop.extend(b, window);
        b = KwikObserveController.extend(b, window);
        return KwikObserveStreamPulls.extend(b, window);
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
                KwikObserveTelemetry.senderCreated(sender, id);
            } catch (Throwable t) {
                AgentRuntime.recordFallback("kwik observe", "the connection runs kwik's own controller as it would"
                        + " without the agent; the spin watch does not track it", t);
            }
        }
    }
}
