package dev.ccagent.agent.instrument;

import dev.ccagent.agent.log.AgentLog;
import dev.ccagent.agent.runtime.AgentRuntime;
import dev.ccagent.agent.runtime.LoaderVerdict;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.dynamic.ClassFileLocator;
import net.bytebuddy.matcher.ElementMatcher;
import net.bytebuddy.pool.TypePool;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;

/**
 * Instrumentation for one target library and version range. Before anything of a class loader is
 * transformed, the module checks that every class and member its advice needs is there
 * ({@link #requirements()}), and logs once per loader whether it applied or why it skipped.
 */
public abstract class TargetModule {

    private final Map<ClassLoader, Boolean> verdicts = Collections.synchronizedMap(new WeakHashMap<>());
    private volatile boolean bootstrapVerdict;
    private volatile boolean bootstrapChecked;

    /** The library's short name as used by {@code targets=}: {@code kwik}, {@code netty}. */
    public abstract String library();

    /** What this module covers, e.g. {@code "kwik 0.10.x (tech.kwik.core)"}. */
    public abstract String description();

    /** Types and members the advice relies on; the first type is the library's anchor (its presence means the library is there). */
    protected abstract List<Requirement> requirements();

    /** The types this module instruments, one {@link TypeInstrumentation} each (modules that override {@link #extend} may leave it empty). */
    protected List<TypeInstrumentation> typeInstrumentations() {
        return List.of();
    }

    /**
     * The package prefix of the library's classes (default: the anchor type's package), by which the
     * installer finds the loaders that already define the library when the agent arrives.
     */
    public String packagePrefix() {
        String anchor = requirements().get(0).typeName();
        return anchor.substring(0, anchor.lastIndexOf('.') + 1);
    }

    /** Whether the module leaves classes of named modules (a library on the module path) alone. */
    protected boolean unnamedModulesOnly() {
        return false;
    }

    /**
     * Adds this module's transformations to the builder, each type guarded by {@code loaderCheck}
     * (the module's requirement and linkage checks for the type's loader), asked only after the type's
     * name matched: so the checks, and their "applied" line, run for the loader that defines the
     * library's classes, not for every child loader that merely sees them through its parent.
     */
    public AgentBuilder extend(AgentBuilder builder, ElementMatcher<ClassLoader> loaderCheck) {
        for (TypeInstrumentation t : typeInstrumentations()) {
            builder = t.transform(builder.type(typeThenLoader(t.typeMatcher(), loaderCheck, unnamedModulesOnly())));
        }
        return builder;
    }

    /**
     * Adds the module's work-arounds of the library's own bugs (races that lose data or stall a
     * connection whether or not the agent is there), each type guarded by {@code loaderCheck} as in
     * {@link #extend}. The installer puts them in a transformer of their own that detach leaves in
     * place: removing a fix from a running server would reopen the bug on the connections alive then
     * (and on later ones), which is not the stock behaviour an operator detaches for but a worse one.
     * After the detach {@code loaderCheck} passes only loaders where the module applied before. A later
     * attach replaces that transformer with its own. Default: none.
     */
    public AgentBuilder extendFixes(AgentBuilder builder, ElementMatcher<ClassLoader> loaderCheck) {
        return builder;
    }

    /**
     * A matcher that tests the type's name first, then (optionally) that its module is unnamed, and
     * only then the class-loader check ({@code AgentBuilder.type(type, loader)} evaluates the loader first).
     */
    public static AgentBuilder.RawMatcher typeThenLoader(ElementMatcher<? super net.bytebuddy.description.type.TypeDescription> type,
                                                         ElementMatcher<ClassLoader> loader, boolean unnamedOnly) {
        return (typeDescription, classLoader, module, classBeingRedefined, protectionDomain) ->
                type.matches(typeDescription) && (!unnamedOnly || module == null || !module.isNamed())
                        && loader.matches(classLoader);
    }

    /** A version string for logs, read from the library's jar (null when unknown). */
    protected String versionIn(ClassLoader loader) {
        return null;
    }

    /**
     * The version of a Maven artifact as a class loader sees it: its {@code pom.properties} when
     * the jar has one, else the {@code artifact-VERSION.jar} name of the jar that holds
     * {@code anchorClass}; null when neither tells.
     */
    protected static String mavenVersion(ClassLoader loader, String groupId, String artifactId, String anchorClass) {
        String properties = "META-INF/maven/" + groupId + "/" + artifactId + "/pom.properties";
        try (java.io.InputStream in = loader == null ? ClassLoader.getSystemResourceAsStream(properties)
                : loader.getResourceAsStream(properties)) {
            if (in != null) {
                java.util.Properties p = new java.util.Properties();
                p.load(in);
                String v = p.getProperty("version");
                if (v != null) {
                    return v;
                }
            }
            String resource = anchorClass.replace('.', '/') + ".class";
            java.net.URL url = loader == null ? ClassLoader.getSystemResource(resource) : loader.getResource(resource);
            if (url != null) {
                String path = url.getPath();
                int bang = path.lastIndexOf('!'); // the innermost jar (nested jars: Spring Boot)
                String jar = (bang > 0 ? path.substring(0, bang) : path);
                String name = jar.substring(jar.lastIndexOf('/') + 1);
                String prefix = artifactId + "-";
                if (name.startsWith(prefix) && name.endsWith(".jar")) {
                    return name.substring(prefix.length(), name.length() - ".jar".length());
                }
            }
        } catch (java.io.IOException | RuntimeException e) {
            // unknown
        }
        return null;
    }

    /** The class-loader guard: true when the requirements hold in that loader (checked once, logged once). */
    public final ElementMatcher<ClassLoader> loaderCheck() {
        return this::appliesTo;
    }

    /** Whether the module's requirements hold in {@code loader}; evaluates and logs once per loader. */
    public final boolean appliesTo(ClassLoader loader) {
        if (loader == null) {
            if (!bootstrapChecked) {
                bootstrapVerdict = evaluate(null);
                bootstrapChecked = true;
            }
            return bootstrapVerdict;
        }
        Boolean v = verdicts.get(loader);
        if (v == null) {
            v = evaluate(loader);
            verdicts.put(loader, v);
        }
        return v;
    }

    /** Whether the module applied in {@code loader} when it was checked; false when it never was (no check now). */
    public final boolean appliedBefore(ClassLoader loader) {
        if (loader == null) {
            return bootstrapChecked && bootstrapVerdict;
        }
        return Boolean.TRUE.equals(verdicts.get(loader));
    }

    /** Missing requirements in a loader (empty: the module applies). */
    public final List<String> missingIn(ClassLoader loader) {
        return Requirement.missingIn(requirements(), loader);
    }

    private boolean evaluate(ClassLoader loader) {
        try {
            ClassFileLocator classFiles = Requirement.classFilesOf(loader);
            TypePool pool = TypePool.Default.of(classFiles);
            if (!requirements().get(0).presentIn(pool)) {
                return false; // the library's anchor type is not in this loader at all: nothing to say
            }
            if (standsAsideIn(loader)) {
                return false; // another module covers this loader (and said so)
            }
            List<String> missing = Requirement.missingIn(requirements(), pool, classFiles);
            String version = versionIn(loader);
            String where = description() + (version != null ? " version " + version : "") + " in " + loaderName(loader);
            if (missing.isEmpty()) {
                String unlinked = link(loader);
                if (unlinked != null) {
                    missing.add(unlinked);
                }
            }
            if (missing.isEmpty()) {
                String verdict = appliedVerdict(loader);
                AgentLog.info(where + ": " + verdict);
                AgentRuntime.recordModule(where + ": " + verdict, LoaderVerdict.now(library(), description(), version,
                        loaderName(loader), true, LoaderVerdict.appliedDetail(verdict)));
                onApplied(loader, version);
                return true;
            }
            String reason = String.join("; ", missing);
            if (skipIsWarning()) {
                AgentLog.warn(where + ": skipped: " + reason);
            } else {
                AgentLog.info(where + ": skipped: " + reason);
            }
            AgentRuntime.recordModule(where + ": skipped: " + reason,
                    LoaderVerdict.now(library(), description(), version, loaderName(loader), false, reason));
            onSkipped(loader, version, reason);
            return false;
        } catch (RuntimeException | LinkageError e) {
            AgentLog.error(description() + ": skipped: the check itself failed", e);
            AgentRuntime.recordModule(description() + " in " + loaderName(loader) + ": skipped: the check itself failed: " + e,
                    LoaderVerdict.now(library(), description(), null, loaderName(loader), false, "the check itself failed: " + e));
            return false;
        }
    }

    /**
     * A module that covers only what another module leaves (e.g. observe-only where the controller
     * swap cannot apply) answers true for loaders the other module covers: no check, no log line.
     */
    protected boolean standsAsideIn(ClassLoader loader) {
        return false;
    }

    /**
     * Whether a skip is logged as a warning (default) or, for a module the operator did not ask for
     * (on by default, with nothing to do where the library lacks what it fixes), as information.
     */
    protected boolean skipIsWarning() {
        return true;
    }

    /** The verdict logged when the requirements hold (default "applied"). */
    protected String appliedVerdict(ClassLoader loader) {
        return "applied";
    }

    /**
     * After the requirements hold in {@code loader}: makes the module's hooks run there (e.g. defines
     * helper classes in it) and verifies that they link against the library's types in that loader.
     *
     * @return null when they do; else the reason the module skips this loader
     */
    protected String link(ClassLoader loader) {
        return null;
    }

    /** Hook for lifecycle events (JFR) when the module applies to a loader. */
    protected void onApplied(ClassLoader loader, String version) {
        dev.ccagent.agent.jfr.CcJfr.lifecycle("module applied", library(), version, description() + " in " + loaderName(loader));
    }

    /** Hook for lifecycle events (JFR) when it skips a loader where the library is present. */
    protected void onSkipped(ClassLoader loader, String version, String reason) {
        dev.ccagent.agent.jfr.CcJfr.lifecycle("module skipped", library(), version,
                description() + " in " + loaderName(loader) + ": " + reason);
    }

    static String loaderName(ClassLoader loader) {
        if (loader == null) {
            return "bootstrap class loader";
        }
        String name = loader.getName();
        return (name != null ? name : loader.getClass().getName()) + "@" + Integer.toHexString(System.identityHashCode(loader));
    }
}
