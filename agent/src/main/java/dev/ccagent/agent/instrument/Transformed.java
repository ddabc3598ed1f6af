package dev.ccagent.agent.instrument;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.WeakHashMap;

/**
 * Which types the agent really transformed, per class loader: filled by the installer's listeners when
 * Byte Buddy has transformed a type (not when a matcher merely chose it). The main transformer's types
 * are forgotten at detach (its reset restores them); a fixes' transformer's types are kept until it is
 * removed, when a later attach has installed its own (detach leaves it in place,
 * {@link TargetModule#extendFixes}). What an event
 * reports as applied rests on this. Loaders are held weakly.
 */
public final class Transformed {

    private static final Map<ClassLoader, Set<String>> BY_LOADER = new WeakHashMap<>();
    private static final Set<String> BOOTSTRAP = new HashSet<>();
    /** Per loader: each type a fixes' transformer transformed, and which one (its listener) did it last. */
    private static final Map<ClassLoader, Map<String, Object>> FIXES_BY_LOADER = new WeakHashMap<>();
    private static final Map<String, Object> FIXES_BOOTSTRAP = new HashMap<>();

    private Transformed() {
    }

    /** The installer's main transformer transformed {@code typeName} in {@code loader} (null: the bootstrap loader). */
    static synchronized void note(String typeName, ClassLoader loader) {
        (loader == null ? BOOTSTRAP : BY_LOADER.computeIfAbsent(loader, l -> new HashSet<>())).add(typeName);
    }

    /** A fixes' transformer ({@code owner}: its listener) transformed {@code typeName} in {@code loader}. */
    static synchronized void noteFix(String typeName, ClassLoader loader, Object owner) {
        (loader == null ? FIXES_BOOTSTRAP : FIXES_BY_LOADER.computeIfAbsent(loader, l -> new HashMap<>()))
                .put(typeName, owner);
    }

    /** Whether {@code typeName} as {@code loader} defined it runs one of our transformations now. */
    public static synchronized boolean in(String typeName, ClassLoader loader) {
        Set<String> types = loader == null ? BOOTSTRAP : BY_LOADER.get(loader);
        Map<String, Object> fixed = loader == null ? FIXES_BOOTSTRAP : FIXES_BY_LOADER.get(loader);
        return (types != null && types.contains(typeName)) || (fixed != null && fixed.containsKey(typeName));
    }

    /** Detach: the main transformer's reset restored its classes; the fixes stay. */
    public static synchronized void forget() {
        BY_LOADER.clear();
        BOOTSTRAP.clear();
    }

    /**
     * A fixes' transformer was removed (its reset retransformed its classes): what it alone still held is
     * forgotten; a type its successor transformed since is the successor's.
     */
    static synchronized void forgetFixesOf(Object owner) {
        FIXES_BOOTSTRAP.values().removeIf(o -> o == owner);
        for (Map<String, Object> fixed : FIXES_BY_LOADER.values()) {
            fixed.values().removeIf(o -> o == owner);
        }
    }

    /** The types the fixes' transformer holds now, as "type in loader", sorted (empty: none). */
    public static synchronized List<String> fixes() {
        Set<String> out = new TreeSet<>();
        for (String t : FIXES_BOOTSTRAP.keySet()) {
            out.add(t + " in " + TargetModule.loaderName(null));
        }
        for (Map.Entry<ClassLoader, Map<String, Object>> e : FIXES_BY_LOADER.entrySet()) {
            for (String t : e.getValue().keySet()) {
                out.add(t + " in " + TargetModule.loaderName(e.getKey()));
            }
        }
        return new ArrayList<>(out);
    }
}
