package dev.ccagent.it.clock;

import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;

import java.lang.instrument.Instrumentation;
import java.time.Instant;
import java.util.jar.JarFile;

import static net.bytebuddy.matcher.ElementMatchers.isStatic;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.none;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

/**
 * A test-only agent that steps the JVM's wall clock as an NTP step or an operator's {@code date -s}
 * would: every {@code period} milliseconds the clock jumps forward by {@code step} milliseconds, and
 * at the next period back again, so a transfer sees steps in both directions. Only the wall clock
 * moves: {@code Instant.now()} and {@code Clock.systemUTC()} (where kwik takes every packet's send and
 * receive time) read {@code java.time.Clock.currentInstant()}, whose result this agent shifts by
 * {@link WallClockOffset#nanos}; {@link System#nanoTime()} is untouched, as the kernel leaves
 * {@code CLOCK_MONOTONIC} untouched by a step.
 *
 * <p>Each step is printed on stderr with the monotonic time it took effect at
 * ({@code [clock-stepper] step +1000 ms at mono=N}); {@code System.nanoTime()} reads the system-wide
 * {@code CLOCK_MONOTONIC} on Linux, so another JVM on the machine can place the steps in its own
 * timeline.
 *
 * <p>Agent arguments: {@code BOOT_JAR,PERIOD_MS,STEP_MS}; {@code BOOT_JAR} holds only
 * {@link WallClockOffset}. Loaded with {@code -javaagent:} a manifest-only jar naming this class, with
 * this module and Byte Buddy on the class path.
 */
public final class ClockStepper {

    private static final String OFFSET_CLASS = "dev.ccagent.it.clock.WallClockOffset";

    private ClockStepper() {
    }

    public static void premain(String args, Instrumentation inst) throws Exception {
        String[] a = args.split(",");
        if (a.length != 3) {
            throw new IllegalArgumentException("clock-stepper: arguments BOOT_JAR,PERIOD_MS,STEP_MS, got: " + args);
        }
        long periodMs = Long.parseLong(a[1]);
        long stepNanos = Long.parseLong(a[2]) * 1_000_000L;
        inst.appendToBootstrapClassLoaderSearch(new JarFile(a[0]));
        // the bootstrap loader's copy: the advice inlined into java.time.Clock reads that one
        Class<?> holder = Class.forName(OFFSET_CLASS, true, null);
        java.lang.reflect.Field offset = holder.getField("nanos");
        // java.base reads no unnamed module on its own: the advice inlined into java.time.Clock must read the holder's
        inst.redefineModule(Object.class.getModule(), java.util.Set.of(holder.getModule()), java.util.Map.of(),
                java.util.Map.of(), java.util.Set.of(), java.util.Map.of());
        new AgentBuilder.Default()
                .disableClassFormatChanges()
                .ignore(none())
                .with(AgentBuilder.RedefinitionStrategy.RETRANSFORMATION)
                .with(AgentBuilder.InitializationStrategy.NoOp.INSTANCE)
                .with(AgentBuilder.TypeStrategy.Default.REDEFINE)
                .with(new dev.ccagent.it.TestAgentListener("clock-stepper", "instrumented"))
                .type(named("java.time.Clock"))
                .transform((builder, type, loader, module, domain) -> builder.visit(Advice.to(Shift.class)
                        .on(named("currentInstant").and(isStatic()).and(takesArguments(0)))))
                .installOn(inst);
        Instant probe = Instant.now();
        offset.setLong(null, 3_600_000_000_000L);
        long shifted = Instant.now().getEpochSecond() - probe.getEpochSecond();
        offset.setLong(null, 0);
        if (shifted < 3_500) {
            throw new IllegalStateException("clock-stepper: Instant.now() did not move with the offset (" + shifted + " s)");
        }
        Thread t = new Thread(() -> {
            long current = 0;
            try {
                while (true) {
                    Thread.sleep(periodMs);
                    long next = current == 0 ? stepNanos : 0;
                    offset.setLong(null, next);
                    System.err.printf("[clock-stepper] step %+d ms at mono=%d%n", (next - current) / 1_000_000, System.nanoTime());
                    current = next;
                }
            } catch (InterruptedException | IllegalAccessException e) {
                System.err.println("[clock-stepper] stopped: " + e);
            }
        }, "clock-stepper");
        t.setDaemon(true);
        t.start();
        System.err.printf("[clock-stepper] stepping the wall clock by %d ms every %d ms%n", stepNanos / 1_000_000, periodMs);
    }

    /** Inlined at the end of {@code java.time.Clock.currentInstant()}. */
    public static final class Shift {
        private Shift() {
        }

        @Advice.OnMethodExit
        static void exit(@Advice.Return(readOnly = false) Instant instant) {
            long n = WallClockOffset.nanos;
            if (n != 0) {
                instant = instant.plusNanos(n);
            }
        }
    }
}
