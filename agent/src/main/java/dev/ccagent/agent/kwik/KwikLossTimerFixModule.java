package dev.ccagent.agent.kwik;

import dev.ccagent.agent.instrument.Requirement;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.matcher.ElementMatcher;

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
public final class KwikLossTimerFixModule extends KwikFixModule {

    static final String RECOVERY_MANAGER = KwikReflection.RECOVERY_MANAGER;

    /** Where the race lives. */
    static final Requirement RACE = Requirement.type(RECOVERY_MANAGER)
            .method("setLossDetectionTimer", "()V")
            .method("unschedule", "()V")
            .method("rescheduleLossDetectionTimeout", "(Ljava/time/Instant;)V");

    public KwikLossTimerFixModule() {
        super("fix.kwik-loss-timer", RACE, "dev.ccagent.agent.kwik.KwikLossTimerFix");
    }

    @Override
    public AgentBuilder extendFixes(AgentBuilder builder, ElementMatcher<ClassLoader> loaderCheck) {
        return builder.type(KwikModule.typeThenLoader(named(RECOVERY_MANAGER), loaderCheck))
                .transform(KwikModule.agentAdvice()
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
