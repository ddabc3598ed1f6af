package dev.ccagent.it.kwik;

import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;

/**
 * The agent's own classes, loaded from the very jar under test ({@code ccagent.jar}) in an isolated
 * loader: the algorithm registry, the argument parser and the canary selector.
 */
final class AgentJar {

    private static URLClassLoader loader;

    private AgentJar() {
    }

    static synchronized ClassLoader loader() throws Exception {
        if (loader == null) {
            loader = new URLClassLoader("ccagent-jar", new URL[] {KwikIt.agentJar().toUri().toURL()},
                    ClassLoader.getPlatformClassLoader());
        }
        return loader;
    }

    /** {@code Algorithms.names()} of the jar. */
    @SuppressWarnings("unchecked")
    static List<String> algorithms() {
        try {
            return new ArrayList<>((List<String>) loader().loadClass("dev.ccagent.cc.registry.Algorithms").getMethod("names").invoke(null));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** The arm {label, algorithm} that AlgorithmSelector picks for {@code connectionId} under {@code agentArgs}. */
    static String[] predictArm(String agentArgs, byte[] connectionId) throws Exception {
        ClassLoader l = loader();
        Object result = l.loadClass("dev.ccagent.agent.config.AgentArgs").getMethod("parse", String.class).invoke(null, agentArgs);
        if (!(boolean) result.getClass().getMethod("ok").invoke(result)) {
            throw new IllegalArgumentException(agentArgs + ": " + result.getClass().getMethod("problems").invoke(result));
        }
        Object config = result.getClass().getMethod("config").invoke(result);
        Class<?> selector = l.loadClass("dev.ccagent.agent.select.AlgorithmSelector");
        // keyed by canary.salt when the arguments set one (the same as the unsalted hash otherwise)
        long hash = (long) selector.getMethod("hash", config.getClass(), byte[].class).invoke(null, config,
                (Object) connectionId);
        Method select = null;
        for (Method m : selector.getMethods()) {
            if (m.getName().equals("select") && m.getParameterCount() == 2) {
                select = m;
            }
        }
        Object arm = select.invoke(null, config, hash);
        return new String[] {(String) arm.getClass().getMethod("label").invoke(arm),
                (String) arm.getClass().getMethod("algorithm").invoke(arm)};
    }
}
