package dev.ccagent.agent.netty;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;

/**
 * The fail-open path of the replaced {@code quiche_conn_new*} calls: when the agent's own lookup of
 * Netty's natives ({@link NettyQuiche}) fails, the call still reaches the original static native
 * method of the caller's package, found by name and signature through plain reflection (nothing of
 * ours in between, no configuration read). Only this path allocates (boxing); it runs once per
 * connection, and only when the normal path is unavailable.
 */
final class OriginalNatives {

    private static final ClassValue<Method[]> BY_QUICHE = new ClassValue<>() {
        @Override
        protected Method[] computeValue(Class<?> quiche) {
            return new Method[2];
        }
    };

    private OriginalNatives() {
    }

    /** Calls the static native {@code name} of {@code caller}'s package's {@code Quiche} class. */
    static Object invoke(Class<?> caller, String name, Object... args) throws Throwable {
        Class<?> quiche = Class.forName(caller.getPackageName() + ".Quiche", false, caller.getClassLoader());
        Method[] cache = BY_QUICHE.get(quiche);
        int slot = args.length == 11 ? 0 : 1;
        Method m = cache[slot];
        if (m == null) {
            m = find(quiche, name, args.length);
            cache[slot] = m;
        }
        try {
            return m.invoke(null, args);
        } catch (InvocationTargetException e) {
            throw e.getCause(); // the native's own failure, exactly as Netty would have seen it
        }
    }

    private static Method find(Class<?> quiche, String name, int arity) throws NoSuchMethodException {
        Class<?>[] types = arity == 11
                ? new Class<?>[] {long.class, int.class, long.class, int.class, long.class, int.class, long.class,
                        int.class, long.class, long.class, boolean.class}
                : new Class<?>[] {long.class, int.class, long.class, int.class, long.class, int.class, long.class,
                        int.class, long.class, long.class};
        Method m = quiche.getDeclaredMethod(name, types);
        m.setAccessible(true);
        return m;
    }
}
