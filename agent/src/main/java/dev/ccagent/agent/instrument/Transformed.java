package dev.ccagent.agent.instrument;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.WeakHashMap;

/**
 * Which types the agent really transformed, per class loader: filled by the installer's listeners when
 * Byte Buddy has transformed a type (not when a matcher merely chose it). The main transformer's types
 * are forgotten at detach (its reset restores them); the fixes' transformer's types are kept until a
 * later attach replaces it (detach leaves it in place, {@link TargetModule#extendFixes}). What an event
 * reports as applied rests on this. Loaders are held weakly.
 */
public final class Transformed {

    private static final Map<ClassLoader, Set<String>> BY_LOADER = new WeakHashMap<>();
    private static final Set<String> BOOTSTRAP = new HashSet<>();
    private static final Map<ClassLoader, Set<String>> FIXES_BY_LOADER = new WeakHashMap<>();
    private static final Set<String> FIXES_BOOTSTRAP = new HashSet<>();

    private Transformed() {
    }

    /** The installer transformed {@code typeName} in {@code loader} (null: the bootstrap loader). */
    static synchronized void note(String typeName, ClassLoader loader, boolean fixes) {
        Map<ClassLoader, Set<String>> byLoader = fixes ? FIXES_BY_LOADER : BY_LOADER;
        (loader == null ? (fixes ? FIXES_BOOTSTRAP : BOOTSTRAP) : byLoader.computeIfAbsent(loader, l -> new HashSet<>()))
                .add(typeName);
    }

    /** Whether {@code typeName} as {@code loader} defined it runs one of our transformations now. */
    public static synchronized boolean in(String typeName, ClassLoader loader) {
        return in(typeName, loader, BY_LOADER, BOOTSTRAP) || in(typeName, loader, FIXES_BY_LOADER, FIXES_BOOTSTRAP);
    }

    private static boolean in(String typeName, ClassLoader loader, Map<ClassLoader, Set<String>> byLoader,
                              Set<String> bootstrap) {
        Set<String> types = loader == null ? bootstrap : byLoader.get(loader);
        return types != null && types.contains(typeName);
    }

    /** Detach: the main transformer's reset restored its classes; the fixes stay. */
    public static synchronized void forget() {
        BY_LOADER.clear();
        BOOTSTRAP.clear();
    }

    /** Before a new fixes' transformer replaces the kept one: its types are noted anew as it transforms them. */
    static synchronized void forgetFixes() {
        FIXES_BY_LOADER.clear();
        FIXES_BOOTSTRAP.clear();
    }

    /** The types the fixes' transformer holds now, as "type in loader", sorted (empty: none). */
    public static synchronized List<String> fixes() {
        Set<String> out = new TreeSet<>();
        for (String t : FIXES_BOOTSTRAP) {
            out.add(t + " in " + TargetModule.loaderName(null));
        }
        for (Map.Entry<ClassLoader, Set<String>> e : FIXES_BY_LOADER.entrySet()) {
            for (String t : e.getValue()) {
                out.add(t + " in " + TargetModule.loaderName(e.getKey()));
            }
        }
        return new ArrayList<>(out);
    }
}
