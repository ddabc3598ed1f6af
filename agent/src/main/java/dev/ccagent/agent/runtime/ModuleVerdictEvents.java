package dev.ccagent.agent.runtime;

import dev.ccagent.jfr.JfrSwitch;
import dev.ccagent.jfr.ModuleVerdict;

/**
 * The {@link ModuleVerdict} events: one when a module decides (while a recording runs), and every verdict
 * {@link AgentRuntime} still keeps again at each chunk start (a {@code beginChunk} periodic hook, registered
 * when Flight Recorder initialises, never earlier), so that a recording started after the verdicts holds them
 * too. Nothing here throws.
 */
public final class ModuleVerdictEvents {

    /** The repeat's kind; a reader deduplicates a verdict by its fields and verdict time. */
    public static final String AT_VERDICT = "at verdict";
    public static final String CHUNK_START = "chunk start";

    private static volatile boolean registered;

    private ModuleVerdictEvents() {
    }

    /** Commits the verdict just made, when a recording wants the event, and makes sure the chunk-start hook is there. */
    public static void atVerdict(LoaderVerdict v) {
        try {
            register();
            if (JfrSwitch.on) {
                commit(v, AT_VERDICT);
            }
        } catch (Throwable ignored) {
            // a verdict's event must never change the verdict
        }
    }

    /** Registers the chunk-start hook once, for when Flight Recorder initialises (immediately if it has). */
    public static void register() {
        if (registered) {
            return;
        }
        synchronized (ModuleVerdictEvents.class) {
            if (registered) {
                return;
            }
            registered = true;
        }
        JfrSwitch.whenRecorderInitialized(() -> jdk.jfr.FlightRecorder.addPeriodicEvent(ModuleVerdict.class,
                new OpaqueRunnable(ModuleVerdictEvents::atChunkStart)));
    }

    private static void atChunkStart() {
        for (LoaderVerdict v : AgentRuntime.loaderVerdicts()) {
            try {
                commit(v, CHUNK_START);
            } catch (Throwable ignored) {
                // one verdict's event must not stop the others'
            }
        }
    }

    private static void commit(LoaderVerdict v, String kind) {
        ModuleVerdict e = new ModuleVerdict();
        if (e.shouldCommit()) {
            e.kind = kind;
            e.library = v.library();
            e.module = v.module();
            e.libraryVersion = v.version() != null ? v.version() : "";
            e.classLoader = v.classLoader();
            e.verdict = v.applied() ? "applied" : "skipped";
            e.reason = v.reason();
            e.verdictTime = v.epochMillis();
            e.commit();
        }
    }
}
