package dev.ccagent.agent.detect;

import dev.ccagent.agent.log.AgentLog;

import java.lang.ref.WeakReference;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The sources a monitor reads each period, added by the libraries' modules and held weakly: a module
 * keeps its source in a static field, so a source defined in an application's loader never pins that
 * loader. Read on the monitor's own thread, never on a library's.
 */
final class WeakSources<S> {

    private final List<WeakReference<S>> sources = new CopyOnWriteArrayList<>();
    private final String warnKey;
    private final String warning;

    /** {@code warning} is logged once (under {@code warnKey}) when a source throws. */
    WeakSources(String warnKey, String warning) {
        this.warnKey = warnKey;
        this.warning = warning;
    }

    void add(S source) {
        sources.add(new WeakReference<>(source));
    }

    /** Gives each source still alive to {@code read}; one that throws is skipped (and logged once). */
    void readEach(Consumer<S> read) {
        sources.removeIf(ref -> ref.get() == null);
        for (WeakReference<S> ref : sources) {
            S s = ref.get();
            if (s == null) {
                continue;
            }
            try {
                read.accept(s);
            } catch (Throwable t) {
                AgentLog.warnOnce(warnKey, warning, t);
            }
        }
    }
}
