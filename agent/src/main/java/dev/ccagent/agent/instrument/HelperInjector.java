package dev.ccagent.agent.instrument;

import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.ClassFileLocator;
import net.bytebuddy.pool.TypePool;

import java.lang.instrument.Instrumentation;
import java.lang.reflect.Method;
import java.security.ProtectionDomain;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Defines copies of the agent's helper classes (the ones that link against a target library's
 * types) in the class loader that defines the library, the way OpenTelemetry's agent injects its
 * instrumentation helpers: a hook class named in inlined advice is then resolved by the library's
 * own loader and links against the library's own types, also when the library lives in a child
 * loader that the agent's loader cannot see (Spring Boot's {@code LaunchedClassLoader}, web
 * application loaders).
 *
 * <p>Everything else the helpers use (configuration, the algorithms, JFR, logging) is not copied: the
 * library's loader reaches it through parent delegation, so there is one agent state per JVM.
 *
 * <p>{@code ClassLoader.defineClass} is reached through the {@link Instrumentation} the JVM handed the
 * agent ({@code redefineModule} opens {@code java.lang} to the agent's module only): no
 * {@code sun.misc.Unsafe}, no command-line flag.
 */
public final class HelperInjector {

    private static volatile Instrumentation instrumentation;
    private static Method defineClass;
    private static Method findLoadedClass;

    private HelperInjector() {
    }

    /** Called once at start with the agent's Instrumentation. */
    public static void init(Instrumentation inst) {
        instrumentation = inst;
    }

    /**
     * Defines {@code names} and their nest members (inner, anonymous and local classes), read from
     * the agent's own loader, in {@code target}; a class {@code target} already defined is kept.
     *
     * @return the names defined now (empty when everything was already there)
     * @throws Exception when the JVM refuses (then nothing of the library is instrumented)
     */
    public static synchronized List<String> inject(ClassLoader target, ClassLoader ours, List<String> names,
                                                   ProtectionDomain domain) throws Exception {
        if (target == null) {
            throw new IllegalStateException("cannot define helper classes in the bootstrap class loader");
        }
        ensureAccess();
        ClassFileLocator locator = ClassFileLocator.ForClassLoader.of(ours);
        TypePool pool = TypePool.Default.of(locator);
        Set<String> all = new LinkedHashSet<>();
        for (String name : names) {
            all.add(name);
            TypeDescription type = pool.describe(name).resolve();
            for (TypeDescription member : type.getNestMembers()) {
                all.add(member.getName());
            }
        }
        List<String> defined = new ArrayList<>();
        for (String name : all) {
            Object lock = lockFor(target, name);
            synchronized (lock) {
                if (findLoadedClass.invoke(target, name) != null) {
                    continue; // injected before (a second attach): keep it
                }
                byte[] bytes = locator.locate(name).resolve();
                defineClass.invoke(target, name, bytes, 0, bytes.length, domain);
                defined.add(name);
            }
        }
        return defined;
    }

    private static Object lockFor(ClassLoader target, String name) {
        try {
            Method m = ClassLoader.class.getDeclaredMethod("getClassLoadingLock", String.class);
            m.setAccessible(true);
            return m.invoke(target, name);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return target;
        }
    }

    private static void ensureAccess() throws ReflectiveOperationException {
        if (defineClass != null) {
            return;
        }
        Instrumentation inst = instrumentation;
        Module javaBase = ClassLoader.class.getModule();
        Module ours = HelperInjector.class.getModule();
        if (!javaBase.isOpen("java.lang", ours)) {
            if (inst == null) {
                throw new IllegalStateException("no Instrumentation to open java.lang for helper injection");
            }
            inst.redefineModule(javaBase, Set.of(), Map.of(), Map.of("java.lang", Set.of(ours)), Set.of(), Map.of());
        }
        Method define = ClassLoader.class.getDeclaredMethod("defineClass", String.class, byte[].class, int.class,
                int.class, ProtectionDomain.class);
        define.setAccessible(true);
        Method find = ClassLoader.class.getDeclaredMethod("findLoadedClass", String.class);
        find.setAccessible(true);
        findLoadedClass = find;
        defineClass = define;
    }
}
