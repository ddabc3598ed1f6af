package dev.ccagent.agent.kwik;

import dev.ccagent.agent.instrument.Requirement;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.MemberSubstitution;
import net.bytebuddy.matcher.ElementMatcher;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static net.bytebuddy.matcher.ElementMatchers.isDeclaredBy;
import static net.bytebuddy.matcher.ElementMatchers.named;

/**
 * {@code fix.kwik-stream-stall=on} with its own requirement check, for loaders where
 * {@link KwikModule} (which applies the same patch with the swap) does not apply: the patch needs only
 * {@code StreamOutputStreamImpl.scheduleSendStreamFrameRequest(boolean)} and its
 * {@code AtomicInteger sendRequestsQueued} (kwik 0.10.0-0.10.3 use a boolean under a lock there, and
 * do not have the race: the line then says "skipped").
 */
public final class KwikStreamStallFixModule extends KwikTargetModule {

    static final String STREAM_OUTPUT = "tech.kwik.core.stream.StreamOutputStreamImpl";

    /**
     * Where the race lives: {@code StreamOutputStreamImpl.scheduleSendStreamFrameRequest} and its
     * {@code sendRequestsQueued} counter, both new in kwik 0.10.7; where they are absent the fix has
     * nothing to close. Checked by this module and, beside the swap, by {@link KwikModule}.
     */
    static final Requirement RACE = Requirement.type(STREAM_OUTPUT)
            .method("scheduleSendStreamFrameRequest", "(Z)V")
            .field("sendRequestsQueued", "Ljava/util/concurrent/atomic/AtomicInteger;");

    private final KwikModule swap;

    public KwikStreamStallFixModule(KwikModule swap) {
        this.swap = swap;
    }

    @Override
    public String description() {
        return "kwik fix.kwik-stream-stall";
    }

    @Override
    protected List<Requirement> requirements() {
        return List.of(RACE, Requirement.type("dev.ccagent.agent.kwik.KwikStreamStallFix"));
    }

    @Override
    protected String versionIn(ClassLoader loader) {
        return mavenVersion(loader, "tech.kwik", "kwik", STREAM_OUTPUT);
    }

    @Override
    protected boolean standsAsideIn(ClassLoader loader) {
        return swap.appliesTo(loader);
    }

    @Override
    public AgentBuilder extend(AgentBuilder builder, ElementMatcher<ClassLoader> loaderCheck) {
        return patch(builder, loaderCheck);
    }

    /**
     * The patch itself (also applied by {@link KwikModule} with the swap): in
     * {@code scheduleSendStreamFrameRequest} a compare-and-set claims the slot before the request becomes
     * visible.
     */
    static AgentBuilder patch(AgentBuilder builder, ElementMatcher<ClassLoader> loaderCheck) {
        return builder.type(KwikModule.typeThenLoader(named(STREAM_OUTPUT), loaderCheck))
                .transform((typeBuilder, type, loader, module, domain) -> {
                    try {
                        return typeBuilder.visit(MemberSubstitution.relaxed()
                                .method(named("get").and(isDeclaredBy(AtomicInteger.class)))
                                .replaceWith(KwikStreamStallFix.class.getMethod("claim", AtomicInteger.class))
                                .method(named("incrementAndGet").and(isDeclaredBy(AtomicInteger.class)))
                                .replaceWith(KwikStreamStallFix.class.getMethod("alreadyClaimed", AtomicInteger.class))
                                .on(named("scheduleSendStreamFrameRequest")));
                    } catch (NoSuchMethodException e) {
                        throw new IllegalStateException(e);
                    }
                });
    }
}
