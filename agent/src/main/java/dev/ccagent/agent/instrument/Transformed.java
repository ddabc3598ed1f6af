package dev.ccagent.agent.instrument;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;

/**
 * Which types the agent really transformed, per class loader: filled by the installer's listener when
 * Byte Buddy has transformed a type (not when a matcher merely chose it), emptied at detach (the reset
 * restores every class). What an event reports as applied rests on this. Loaders are held weakly.
 */
public final class Transformed {

    private static final Map<ClassLoader, Set<String>> BY_LOADER = new WeakHashMap<>();
    private static final Set<String> BOOTSTRAP = new HashSet<>();

    private Transformed() {
    }

    /** The installer transformed {@code typeName} in {@code loader} (null: the bootstrap loader). */
    static synchronized void note(String typeName, ClassLoader loader) {
        (loader == null ? BOOTSTRAP : BY_LOADER.computeIfAbsent(loader, l -> new HashSet<>())).add(typeName);
    }

    /** Whether {@code typeName} as {@code loader} defined it runs our transformation now. */
    public static synchronized boolean in(String typeName, ClassLoader loader) {
        Set<String> types = loader == null ? BOOTSTRAP : BY_LOADER.get(loader);
        return types != null && types.contains(typeName);
    }

    /** Detach: the reset restored every transformed class. */
    public static synchronized void forget() {
        BY_LOADER.clear();
        BOOTSTRAP.clear();
    }
}
