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

    private EpisodeEvents() {
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
