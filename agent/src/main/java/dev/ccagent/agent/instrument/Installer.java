package dev.ccagent.agent.instrument;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.log.AgentLog;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.agent.builder.ResettableClassFileTransformer;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.DynamicType;
import net.bytebuddy.matcher.ElementMatcher;
import net.bytebuddy.utility.JavaModule;

import java.lang.instrument.Instrumentation;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;

import static net.bytebuddy.matcher.ElementMatchers.nameStartsWith;

/**
 * Builds Byte Buddy {@link AgentBuilder}s from the target modules the configuration selects and
 * installs them, retransforming classes already loaded (late attach): one for the instrumentation,
 * which detach removes, and one for the fixes of the libraries' own bugs, which detach keeps. Every transformation error is
 * logged; none propagates into the host.
 */
public final class Installer {

    private Installer() {
    }

    /**
     * The modules for a configuration: those of every target library it targets, in the order the
     * service file lists the libraries. A library whose provider cannot be loaded is logged and left
     * out (its classes keep their stock behaviour); the others still apply.
     */
    public static List<TargetModule> modules(AgentConfig config) {
        List<TargetModule> modules = new ArrayList<>();
        Iterator<TargetLibrary> libraries = ServiceLoader.load(TargetLibrary.class, TargetLibrary.class.getClassLoader())
                .iterator();
        while (true) {
            TargetLibrary library;
            try {
                if (!libraries.hasNext()) {
                    break;
                }
                library = libraries.next();
            } catch (ServiceConfigurationError e) {
                AgentLog.error("a target library could not be loaded; its classes keep their stock behaviour", e);
                continue;
            }
            if (config.targets(library.name())) {
                modules.addAll(library.modules(config));
            }
        }
        return modules;
    }

    /** Installs the modules; returns the transformer (to reset on detach). */
    public static ResettableClassFileTransformer install(Instrumentation inst, List<TargetModule> modules) {
        AgentBuilder builder = base(new TransformLogger(false));
        for (TargetModule m : modules) {
            builder = m.extend(builder, m.loaderCheck());
        }
        ResettableClassFileTransformer transformer = builder.installOn(inst);
        checkLoadersDefiningLibraries(inst, modules);
        return transformer;
    }

    /**
     * A transformer of the fixes of the libraries' own bugs, the {@link Instrumentation} it was
     * installed on (each attach gets one of its own from the JVM, and a transformer can only be removed
     * through the one it was added to), its listener ({@code owner}: what {@link Transformed} notes its
     * classes under), and {@code earlier}: fixes' transformers a later attach could not remove, retried
     * at the next one.
     */
    public record Fixes(Instrumentation instrumentation, ResettableClassFileTransformer transformer,
                        TransformLogger owner, Fixes earlier) {
    }

    /**
     * Installs the modules' fixes of their libraries' own bugs ({@link TargetModule#extendFixes}) in a
     * transformer of their own, which detach leaves in place, and then removes {@code previous} (what a
     * detached attach left; null: none). The new one is installed first, so a class it fixes never runs
     * unfixed in between (while both are there the second finds nothing left to patch, or takes the
     * loss-timer lock a second time, reentrantly). Returns what is installed now (null: nothing).
     */
    public static Fixes replaceFixes(Instrumentation inst, List<TargetModule> modules, Fixes previous) {
        TransformLogger logger = new TransformLogger(true);
        AgentBuilder none = base(logger);
        AgentBuilder builder = none;
        for (TargetModule m : modules) {
            builder = m.extendFixes(builder, fixesLoaderCheck(m, logger));
        }
        ResettableClassFileTransformer installed = builder == none ? null : builder.installOn(inst);
        Fixes left = null;
        int removed = 0;
        for (Fixes f = previous; f != null; f = f.earlier()) {
            try {
                if (f.transformer().reset(f.instrumentation(), AgentBuilder.RedefinitionStrategy.RETRANSFORMATION)) {
                    removed++;
                }
                Transformed.forgetFixesOf(f.owner());
            } catch (Throwable t) {
                AgentLog.warn("the fixes a detach kept could not be removed; they stay beside this attach's until the"
                        + " next attach tries again: " + t);
                left = new Fixes(f.instrumentation(), f.transformer(), f.owner(), left);
            }
        }
        if (removed > 0) {
            String line = "the fixes of the libraries' own bugs that a detach kept are replaced by this attach's"
                    + (installed == null ? " (none)" : "");
            AgentLog.info(line);
            dev.ccagent.agent.runtime.AgentRuntime.recordModule("attached again: " + line); // status, after the detach's line
        }
        return installed == null ? left : new Fixes(inst, installed, logger, left);
    }

    /**
     * The loader check of a module's fixes: the module's own while attached; after a detach, only a
     * loader where the module applied before (no check now, no "applied" line, no helper injected for a
     * loader first seen after the detach: its kwik runs as released).
     */
    private static ElementMatcher<ClassLoader> fixesLoaderCheck(TargetModule m, TransformLogger logger) {
        return loader -> logger.attached ? m.appliesTo(loader) : m.appliedBefore(loader);
    }

    /** Detach: each fixes' transformer stays, for the loaders it has applied to (see {@link #fixesLoaderCheck}). */
    public static void keepAfterDetach(Fixes fixes) {
        for (Fixes f = fixes; f != null; f = f.earlier()) {
            f.owner().attached = false;
        }
    }

    /** A builder with the agent's strategies, ignores and listener. */
    private static AgentBuilder base(TransformLogger logger) {
        skipNexus();
        return new AgentBuilder.Default()
                .disableClassFormatChanges()
                .with(AgentBuilder.RedefinitionStrategy.RETRANSFORMATION)
                .with(new RetransformLogger())
                .with(AgentBuilder.TypeStrategy.Default.REDEFINE)
                .with(logger)
                .ignore(nameStartsWith("dev.ccagent.").or(nameStartsWith("java.")).or(nameStartsWith("jdk."))
                        .or(nameStartsWith("sun.")).or(nameStartsWith("com.sun.")));
    }

    /**
     * Keeps Byte Buddy from injecting its {@code Nexus} into the system class loader. Every
     * {@code new AgentBuilder.Default()} first builds the default initialization strategy
     * ({@code SelfInjection.Split}), whose {@code NexusAccessor} initializes once per JVM by defining
     * {@code Nexus} through {@code ClassInjector.UsingReflection}, which in turn generates its own
     * dispatcher classes with Byte Buddy (194 of the 2,811 classes an idle JVM with the agent loaded; with
     * {@link #checkLoadersDefiningLibraries}'s prefixes read once, its start-up went from 2.45 to 1.87 s of
     * CPU: BENCHMARKS.md, "The agent's start-up"), before {@link #base}'s
     * {@code disableClassFormatChanges()} replaces that strategy with one that never uses the Nexus (the
     * agent's transformations are inlined {@code Advice} and member substitutions, which have no
     * loaded-type initializers to hand over). Byte Buddy reads its documented switch,
     * {@link net.bytebuddy.dynamic.Nexus#PROPERTY}, once, when {@code NexusAccessor} initializes: it is
     * set around that initialization only (and the shade relocates the name with the package, so only
     * the agent's copy of Byte Buddy reads it), then put back as it was. Where a security manager forbids
     * the property, Byte Buddy builds its Nexus as before.
     */
    static void skipNexus() {
        String property = net.bytebuddy.dynamic.Nexus.PROPERTY;
        try {
            String before = System.getProperty(property);
            System.setProperty(property, "true");
            try {
                net.bytebuddy.dynamic.NexusAccessor.isAlive(); // initializes it (a no-op after the first time)
            } finally {
                if (before == null) {
                    System.clearProperty(property);
                } else {
                    System.setProperty(property, before);
                }
            }
        } catch (SecurityException e) {
            // the slower start-up, nothing else
        }
    }

    /**
     * The loaders that already define a library's classes when the agent arrives (late attach, or a
     * library loaded before premain) get their module verdict now, so that {@code attach} and
     * {@code status} say at once whether each module applies there, not only when the first
     * instrumented type loads (the type matchers ask a loader only once its type matched). Only the
     * defining loader of a library class counts: a child loader that merely sees it is not asked.
     */
    static void checkLoadersDefiningLibraries(Instrumentation inst, List<TargetModule> modules) {
        try {
            java.util.Map<TargetModule, java.util.Set<ClassLoader>> loaders = new java.util.LinkedHashMap<>();
            // each module's prefix once (a module derives it from its requirements, which it builds anew
            // on each call), not once per loaded class
            String[] prefixes = new String[modules.size()];
            for (int i = 0; i < prefixes.length; i++) {
                prefixes[i] = modules.get(i).packagePrefix();
            }
            for (Class<?> c : inst.getAllLoadedClasses()) {
                ClassLoader l = c.getClassLoader();
                if (l == null) {
                    continue;
                }
                String name = c.getName();
                for (int i = 0; i < prefixes.length; i++) {
                    TargetModule m = modules.get(i);
                    if (name.startsWith(prefixes[i])) {
                        loaders.computeIfAbsent(m, k -> java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>()))
                                .add(l);
                    }
                }
            }
            for (java.util.Map.Entry<TargetModule, java.util.Set<ClassLoader>> e : loaders.entrySet()) {
                for (ClassLoader l : e.getValue()) {
                    e.getKey().appliesTo(l);
                }
            }
        } catch (RuntimeException | LinkageError e) {
            AgentLog.warn("the loaders already holding a target library could not be listed; their modules"
                    + " report when their classes are next transformed: " + e);
        }
    }

    /** Logs each transformation: what was instrumented (debug) and every error (warn). */
    public static final class TransformLogger extends AgentBuilder.Listener.Adapter {
        private final boolean fixes;
        /** For a fixes' transformer: false once a detach left it in place. */
        volatile boolean attached = true;

        TransformLogger(boolean fixes) {
            this.fixes = fixes;
        }

        @Override
        public void onTransformation(TypeDescription type, ClassLoader loader, JavaModule module, boolean loaded,
                                     DynamicType dynamicType) {
            if (fixes) {
                Transformed.noteFix(type.getName(), loader, this);
            } else {
                Transformed.note(type.getName(), loader);
            }
            AgentLog.debug("instrumented " + type.getName() + (loaded ? " (retransformed)" : "")
                    + (fixes ? " (a fix of the library's own bug: kept after a detach)" : ""));
        }

        @Override
        public void onError(String typeName, ClassLoader loader, JavaModule module, boolean loaded, Throwable error) {
            AgentLog.warn("could not instrument " + typeName + "; it keeps its stock behaviour: " + error);
        }
    }

    /** Logs retransformation batches that fail (late attach). */
    static final class RetransformLogger extends AgentBuilder.RedefinitionStrategy.Listener.Adapter {
        @Override
        public java.lang.Iterable<? extends List<Class<?>>> onError(int index, List<Class<?>> batch, Throwable throwable,
                                                                   List<Class<?>> types) {
            AgentLog.warn("could not retransform " + batch + ": " + throwable);
            return java.util.Collections.emptyList();
        }
    }
}
