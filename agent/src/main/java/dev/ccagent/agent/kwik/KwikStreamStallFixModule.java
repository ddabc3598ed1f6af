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
 * {@code fix.kwik-stream-stall} (on by default) with its own requirement check, for loaders where
 * {@link KwikModule} (which applies the same patch with the swap) does not apply: the patch needs only
 * {@code StreamOutputStreamImpl.scheduleSendStreamFrameRequest(boolean)} in the race's order over its
 * {@code AtomicInteger sendRequestsQueued} ({@link #RACE}; kwik 0.10.0-0.10.4 use a boolean under a lock
 * there, and do not have the race: the line then says "skipped").
 * Its "applied" line says why it is on ({@link #whyOn}).
 */
public final class KwikStreamStallFixModule extends KwikFixModule {

    static final String STREAM_OUTPUT = "tech.kwik.core.stream.StreamOutputStreamImpl";

    /**
     * Where the race lives: {@code StreamOutputStreamImpl.scheduleSendStreamFrameRequest} and its
     * {@code sendRequestsQueued} counter, both new in kwik 0.10.7, in the racy order of 0.10.7-0.10.9
     * ({@link #racyOrder}); where they are absent, or a later kwik orders them otherwise, the fix has
     * nothing to close (or would not fit) and is skipped. Checked by this module and, beside the swap,
     * by {@link KwikModule}. The fix is on by default where this holds.
     */
    static final Requirement RACE = Requirement.type(STREAM_OUTPUT)
            .field("sendRequestsQueued", "Ljava/util/concurrent/atomic/AtomicInteger;")
            .code("scheduleSendStreamFrameRequest", "(Z)V", KwikStreamStallFixModule::racyOrder);

    static final String COUNTER = "getfield tech/kwik/core/stream/StreamOutputStreamImpl.sendRequestsQueued";
    static final String READ = "call java/util/concurrent/atomic/AtomicInteger.get ()I";
    static final String COUNT = "call java/util/concurrent/atomic/AtomicInteger.incrementAndGet ()I";
    static final String QUEUE = "call tech/kwik/core/impl/QuicConnectionImpl.send ";

    /**
     * The race's shape, as javap shows it in kwik 0.10.7, 0.10.8 and 0.10.9: the counter read once
     * ({@code sendRequestsQueued.get()}), then the request queued ({@code QuicConnectionImpl.send}),
     * then the counter incremented once ({@code sendRequestsQueued.incrementAndGet()}). The patch
     * substitutes exactly that one read and that one increment, so it applies only to this order: null
     * when {@code steps} (the method's field reads and calls) have it, else what differs.
     */
    static String racyOrder(List<String> steps) {
        int read = steps.indexOf(READ);
        int count = steps.indexOf(COUNT);
        if (read < 0 || count < 0 || read != steps.lastIndexOf(READ) || count != steps.lastIndexOf(COUNT)) {
            return "does not read and increment an AtomicInteger once each (kwik 0.10.7-0.10.9's race does)";
        }
        if (read == 0 || !steps.get(read - 1).equals(COUNTER) || !steps.get(count - 1).equals(COUNTER)) {
            return "its AtomicInteger read and increment are not on sendRequestsQueued";
        }
        for (int i = read + 1; i < count; i++) {
            if (steps.get(i).startsWith(QUEUE)) {
                return null;
            }
        }
        return "does not queue the send request between reading sendRequestsQueued and incrementing it"
                + " (the race's order in kwik 0.10.7-0.10.9)";
    }

    private final KwikModule swap;

    public KwikStreamStallFixModule(KwikModule swap) {
        super("fix.kwik-stream-stall", RACE, "dev.ccagent.agent.kwik.KwikStreamStallFix");
        this.swap = swap;
    }

    @Override
    protected boolean skipIsWarning() {
        return !swap.config().fixKwikStreamStallByDefault(); // asked for by name: its absence is news
    }

    @Override
    protected String appliedVerdict(ClassLoader loader) {
        return "applied" + whyOn(swap.config());
    }

    /**
     * Beside "applied": when the operator did not name the option, that the fix is on by default, why,
     * and how to turn it off; {@code " (fix.kwik-stream-stall=on)"} when that was given.
     */
    static String whyOn(dev.ccagent.agent.config.AgentConfig config) {
        if (!config.fixKwikStreamStallByDefault()) {
            return " (fix.kwik-stream-stall=on)";
        }
        return " (on by default: kwik's own stream-send race leaves a stream with data and no send request"
                + " until the idle timeout; it stalled 51-71 of 400 downloads of a kwik HTTP/3 server without"
                + " the agent at 1% loss (three runs), see docs/kwik.md; fix.kwik-stream-stall=off turns it off)";
    }

    @Override
    protected boolean standsAsideIn(ClassLoader loader) {
        return swap.appliesTo(loader);
    }

    @Override
    public AgentBuilder extendFixes(AgentBuilder builder, ElementMatcher<ClassLoader> loaderCheck) {
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
