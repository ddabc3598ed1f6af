package dev.ccagent.agent.kwik;

import dev.ccagent.agent.log.AgentLog;
import dev.ccagent.agent.runtime.AgentRuntime;

import java.util.List;

/**
 * JDK 26+ (JEP 500, "prepare to make final mean final"): writing a final field by deep reflection
 * warns (default), or throws with {@code --illegal-final-field-mutation=deny}, unless the module doing
 * it is named in {@code --enable-final-field-mutation}. The kwik controller swap writes the private
 * final {@code congestionController} fields of {@code SenderImpl}, {@code RecoveryManager} and the
 * {@code LossDetector}s ({@link KwikReflection#swapController}). This class says once, when kwik
 * is instrumented on such a JVM, what will happen: the JVM's one warning, or (deny) every connection
 * keeps kwik's controller, counted as a fallback; and how to allow it.
 */
final class FinalFieldMutation {

    private static volatile boolean said;

    private FinalFieldMutation() {
    }

    static void noteOnce() {
        if (said) {
            return;
        }
        said = true;
        int feature = Runtime.version().feature();
        if (feature < 26) {
            return;
        }
        String mode = "warn";
        boolean enabled = false;
        try {
            List<String> args = java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments();
            for (String a : args) {
                if (a.startsWith("--illegal-final-field-mutation=")) {
                    mode = a.substring(a.indexOf('=') + 1);
                }
                if (a.startsWith("--enable-final-field-mutation=") && a.contains("ALL-UNNAMED")) {
                    enabled = true;
                }
            }
        } catch (RuntimeException | LinkageError e) {
            // unknown: assume the default
        }
        String what;
        if (enabled || mode.equals("allow")) {
            what = "allowed by the command line: the swap proceeds silently";
        } else if (mode.equals("deny")) {
            what = "denied (--illegal-final-field-mutation=deny): the swap fails and every kwik connection keeps"
                    + " kwik's own controller (fail open, counted as a fallback)";
        } else {
            what = "the JVM prints one warning at the first swap and the swap proceeds; add"
                    + " --enable-final-field-mutation=ALL-UNNAMED to allow it explicitly";
        }
        String line = "Java " + feature + " (JEP 500): the kwik controller swap writes kwik's final congestionController"
                + " fields by reflection; " + what;
        AgentLog.info(line);
        AgentRuntime.recordModule(line);
    }
}
