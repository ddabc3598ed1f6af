package dev.ccagent.agent.detect;

import dev.ccagent.jfr.JfrSwitch;

import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * How an episode's JFR events tile its time (CPU spins, stream stalls): each event begins at the previous
 * one's commit, so a recording holds the episode from its detection to its end without gaps. Nothing is
 * created while no recording is on.
 */
final class EpisodeEvents {

    /** Event types whose chunk-end hook is registered (once each, for the JVM's life). */
    private static final java.util.Set<Class<?>> CHUNK_HOOKS = new java.util.HashSet<>();

    private EpisodeEvents() {
    }

    /**
     * Runs {@code commitOpen} (on JFR's thread) whenever a chunk ends (recording stop, rotation, dump, exit),
     * so that a recording holds every episode still open; registered once per event type, when the
     * recorder first exists. The type needs {@code @Period("endChunk")}.
     */
    static synchronized void atChunkEnd(Class<? extends jdk.jfr.Event> type, Runnable commitOpen) {
        if (CHUNK_HOOKS.add(type)) {
            JfrSwitch.whenRecorderInitialized(() -> jdk.jfr.FlightRecorder.addPeriodicEvent(type,
                    new dev.ccagent.agent.runtime.OpaqueRunnable(commitOpen)));
        }
    }

    /**
     * Commits the episode's event: {@code begun} (begun at its previous commit), or one from now when there is
     * none (the first, or the first since a recording started), filled by {@code fill}. Returns the next event,
     * begun now, while the episode goes on ({@code ongoing}); null at its end or when events are off.
     */
    static <E extends jdk.jfr.Event> E commit(E begun, Supplier<E> create, Consumer<E> fill, boolean ongoing) {
        if (!JfrSwitch.on) {
            return null;
        }
        E ev = begun;
        if (ev == null) {
            ev = create.get();
            ev.begin();
        }
        ev.end();
        if (ev.shouldCommit()) {
            fill.accept(ev);
            ev.commit();
        }
        if (!ongoing) {
            return null;
        }
        E next = create.get();
        if (!next.isEnabled()) {
            return null;
        }
        next.begin();
        return next;
    }
}
