package dev.ccagent.agent.kwik;

import dev.ccagent.agent.connection.LiveConnection;
import dev.ccagent.agent.connection.LiveConnections;
import dev.ccagent.agent.instrument.HelperInjector;
import dev.ccagent.agent.log.AgentLog;

import java.lang.reflect.Method;
import java.util.List;

/**
 * Makes sure the hooks that kwik's instrumented code calls run in the class loader that defines
 * kwik, linked against that loader's kwik types; says why not otherwise.
 *
 * <p>The inlined advice names {@link KwikHooks} and {@link KwikTelemetry}; kwik's defining loader
 * resolves those names. With kwik on the application class path that is the agent's own loader and
 * nothing is needed. With kwik in a child loader (a Spring Boot executable jar's
 * {@code LaunchedClassLoader}, a web application's loader) the loader would find the agent's copies
 * through delegation, and they link against kwik types the agent's loader cannot see: every hook
 * would fail with {@code NoClassDefFoundError}, swallowed by the advice. So the helpers that link
 * against kwik ({@link #HELPERS}) are defined again in kwik's loader ({@link HelperInjector}), and the
 * result is verified: the loader resolves our hook names to classes it defined, our adapter
 * implements that loader's {@code CongestionController}, and the classes the helpers share with the
 * rest of the agent ({@link LiveConnections}, {@link LiveConnection}, the configuration) are the
 * agent's own.
 */
final class KwikLinkage {

    /** The agent classes that link against kwik types; defined in kwik's loader when it is not ours. */
    static final List<String> HELPERS = List.of(
            "dev.ccagent.agent.kwik.KwikHooks",
            "dev.ccagent.agent.kwik.KwikControllerAdapter",
            "dev.ccagent.agent.kwik.KwikMeter",
            "dev.ccagent.agent.kwik.KwikPacketTimes",
            "dev.ccagent.agent.kwik.KwikReflection",
            "dev.ccagent.agent.kwik.KwikTelemetry",
            "dev.ccagent.agent.kwik.KwikConnectionSelector");

    private static final String KWIK_CC = "tech.kwik.core.cc.CongestionController";

    private KwikLinkage() {
    }

    /**
     * Prepares {@code kwikLoader} (the loader that defines kwik's classes).
     *
     * @return null when the hooks will run there, linked against its kwik; else why not
     */
    static String prepare(ClassLoader kwikLoader) {
        ClassLoader ours = KwikLinkage.class.getClassLoader();
        try {
            Module kwikModule = Class.forName(KWIK_CC, false, kwikLoader).getModule();
            if (kwikModule.isNamed()) {
                // tried: opening kwik's packages and adding a read edge to the agent by
                // Instrumentation.redefineModule was not enough (the transfer died), so the module
                // path is refused as a whole: no class of kwik is changed
                return "kwik is on the module path (module " + kwikModule.getName() + "); the agent instruments kwik"
                        + " on the class path only, so this kwik keeps its stock behaviour";
            }
        } catch (ClassNotFoundException | RuntimeException | LinkageError e) {
            return "kwik's module could not be determined: " + e;
        }
        if (kwikLoader == ours) {
            return null; // kwik on the agent's class path (the application class path): one set of types
        }
        String where = loaderName(kwikLoader);
        // 1. the agent state the hooks share must be reachable, and be ours, from kwik's loader
        try {
            for (Class<?> shared : new Class<?>[] {LiveConnections.class, LiveConnection.class,
                    dev.ccagent.agent.runtime.AgentRuntime.class}) {
                Class<?> seen = Class.forName(shared.getName(), false, kwikLoader);
                if (seen != shared) {
                    return where + " has its own copy of " + shared.getName()
                            + " (another ccagent jar inside the application?)";
                }
            }
        } catch (ClassNotFoundException | LinkageError e) {
            return "the agent's classes are not visible from " + where
                    + " (it does not delegate to the application class loader): " + e;
        }
        try {
            Class<?> kwikCc = Class.forName(KWIK_CC, false, kwikLoader);
            Class<?> oursCc = null;
            try {
                oursCc = Class.forName(KWIK_CC, false, ours);
            } catch (ClassNotFoundException | LinkageError e) {
                // the usual child-loader case: the agent's loader does not see kwik
            }
            if (oursCc != kwikCc) {
                // 2. define the helpers in kwik's loader
                List<String> defined = HelperInjector.inject(kwikLoader, ours, HELPERS,
                        KwikLinkage.class.getProtectionDomain());
                if (!defined.isEmpty()) {
                    AgentLog.debug("kwik helpers defined in " + where + ": " + defined);
                }
            }
            // 3. verify: the names the advice uses resolve, in kwik's loader, to classes that link
            //    against that loader's kwik
            Class<?> hooks = Class.forName("dev.ccagent.agent.kwik.KwikHooks", false, kwikLoader);
            Class<?> adapter = Class.forName("dev.ccagent.agent.kwik.KwikControllerAdapter", false, kwikLoader);
            Class<?> telemetry = Class.forName("dev.ccagent.agent.kwik.KwikTelemetry", false, kwikLoader);
            if (!kwikCc.isAssignableFrom(adapter)) {
                return "the hooks " + where + " resolves do not implement its " + KWIK_CC + " (adapter from "
                        + loaderName(adapter.getClassLoader()) + ")";
            }
            if (!LiveConnection.class.isAssignableFrom(adapter)) {
                return "the adapter in " + where + " is not the agent's " + LiveConnection.class.getName();
            }
            // resolve every type in the helpers' signatures now (a LinkageError here, not in kwik's
            // constructor), and run their static initialisers
            for (Class<?> c : new Class<?>[] {hooks, adapter, telemetry}) {
                for (Method m : c.getDeclaredMethods()) {
                    m.getParameterTypes();
                }
                c.getDeclaredConstructors();
            }
            Class.forName(hooks.getName(), true, kwikLoader);
            Class.forName("dev.ccagent.agent.kwik.KwikReflection", true, kwikLoader);
            return null;
        } catch (Exception | LinkageError e) {
            return "the hooks could not be linked in " + where + ": " + e;
        }
    }

    static String loaderName(ClassLoader loader) {
        if (loader == null) {
            return "the bootstrap class loader";
        }
        String name = loader.getName();
        return (name != null ? name : loader.getClass().getName()) + "@" + Integer.toHexString(System.identityHashCode(loader));
    }
}
