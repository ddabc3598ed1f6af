package dev.ccagent.agent.kwik;

import dev.ccagent.agent.instrument.Requirement;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.matcher.ElementMatcher;

import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

/**
 * {@code fix.kwik-loss-timer=on}: makes kwik's {@code RecoveryManager.setLossDetectionTimer()} one
 * atomic update (see {@link KwikLossTimerFix}). Its own module, in every loader that defines kwik, with
 * or without the controller swap: it needs only that method, {@code unschedule()} and
 * {@code rescheduleLossDetectionTimeout(Instant)} (the decide-then-act shape; present, with the race, in
 * every kwik 0.10.x this build tests: 0.10.3, 0.10.4, 0.10.7, 0.10.8, 0.10.9). Where they are missing the
 * line says "skipped" and kwik runs as released.
 */
public final class KwikLossTimerFixModule extends KwikTargetModule {

    static final String RECOVERY_MANAGER = KwikReflection.RECOVERY_MANAGER;

    /** Where the race lives. */
    static final Requirement RACE = Requirement.type(RECOVERY_MANAGER)
            .method("setLossDetectionTimer", "()V")
            .method("unschedule", "()V")
            .method("rescheduleLossDetectionTimeout", "(Ljava/time/Instant;)V");

    @Override
    public String description() {
        return "kwik fix.kwik-loss-timer";
    }

    @Override
    protected List<Requirement> requirements() {
        return List.of(RACE, Requirement.type("dev.ccagent.agent.kwik.KwikLossTimerFix"));
    }

    @Override
    protected String versionIn(ClassLoader loader) {
        return mavenVersion(loader, "tech.kwik", "kwik", RECOVERY_MANAGER);
    }

    @Override
    public AgentBuilder extendFixes(AgentBuilder builder, ElementMatcher<ClassLoader> loaderCheck) {
        ClassLoader ours = KwikLossTimerFixModule.class.getClassLoader();
        return builder.type(KwikModule.typeThenLoader(named(RECOVERY_MANAGER), loaderCheck))
                .transform(new AgentBuilder.Transformer.ForAdvice()
                        .include(ours)
                        .advice(named("setLossDetectionTimer").and(takesArguments(0)), LockedAdvice.class.getName()));
    }

    /** Inlined around kwik's setLossDetectionTimer(): the body runs under the manager's lock. */
    public static final class LockedAdvice {
        private LockedAdvice() {
        }

        /** Fails open: if taking the lock throws, the body runs as released (unlocked). */
        @Advice.OnMethodEnter(suppress = Throwable.class)
        public static ReentrantLock enter(@Advice.This Object recoveryManager) {
            return KwikLossTimerFix.enter(recoveryManager);
        }

        @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
        public static void exit(@Advice.Enter ReentrantLock lock) {
            KwikLossTimerFix.exit(lock);
        }
    }
}
