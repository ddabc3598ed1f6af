package dev.ccagent.agent.netty;

import dev.ccagent.agent.instrument.HelperInjector;
import dev.ccagent.agent.log.AgentLog;

import java.lang.reflect.Method;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;

/**
 * The class-loader linkage check of the Netty modules: makes every Netty feature run in the class
 * loader that defines a Netty QUIC, linked against that loader's Netty, and says why not otherwise.
 *
 * <p>The inlined advice names {@link NettyHooks}; Netty's defining loader resolves that name. With
 * Netty on the agent's class path (the application class path, a shaded jar) that is the agent's own
 * copy and nothing is needed. With Netty in a child loader (a Spring Boot executable jar's
 * {@code BOOT-INF/lib}, a web application, a framework's own loader) the agent's copy would link
 * against a Netty the agent's loader cannot see, and pacing ({@link NettyPacer}, a
 * {@code ChannelDuplexHandler}), path stats, arm metrics, the connection summary and spin monitoring
 * ({@link NettyConnections}: {@code Channel}, {@code AttributeKey}) would fail on every connection with
 * {@code NoClassDefFoundError}. So the runtime classes of this package ({@link #HELPERS}) are defined
 * again in Netty's loader ({@link HelperInjector}, as OpenTelemetry's agent injects its helpers and as
 * {@code KwikLinkage} does for kwik), then verified: the loader resolves {@link NettyHooks} to the copy
 * it defined, the pacer extends that loader's {@code ChannelDuplexHandler}, every signature resolves,
 * and the agent state the copies share (configuration, counters, the live-connection registry, JFR,
 * the spin detector) is the agent's own, reached by delegation.
 *
 * <p>Where that cannot be done (a loader that does not see the agent, the JVM refusing the
 * definition), the algorithm choice still runs (it links against no Netty type: quiche's natives are
 * reached through method handles looked up from the calling class, {@link NettyQuiche}); the module
 * says once, naming the loader and the reason, that only the algorithm choice applies there, and the
 * hooks of the other features do nothing for that loader's channels ({@link #linked}): no
 * per-connection failure, no fallback count.
 */
final class NettyLinkage {

    /**
     * The classes of this package that run inside a server (everything the advice reaches from
     * {@link NettyHooks}), defined in Netty's loader when it is not the agent's; {@link NettyHooks}
     * last, so that a refusal part-way leaves the advice resolving the agent's own copy.
     * (The install-time classes, {@link NettyModule}, {@link NettyLibrary} and the {@code Quiche*Instrumentation}
     * files, stay in the agent's loader; {@code NettyLinkageTest} checks the two sets cover the package.)
     */
    static final List<String> HELPERS = List.of(
            "dev.ccagent.agent.netty.NettyLinkage",
            "dev.ccagent.agent.netty.NettyQuiche",
            "dev.ccagent.agent.netty.OriginalNatives",
            "dev.ccagent.agent.netty.FieldOffsetFinder",
            "dev.ccagent.agent.netty.NettyConfigLayout",
            "dev.ccagent.agent.netty.NettyConfigs",
            "dev.ccagent.agent.netty.NettyMeter",
            "dev.ccagent.agent.netty.QuichePathStats",
            "dev.ccagent.agent.netty.NettyPollMethods",
            "dev.ccagent.agent.netty.NettyConnections",
            "dev.ccagent.agent.netty.NettyPacer",
            "dev.ccagent.agent.netty.NettyChannelPacing",
            "dev.ccagent.agent.netty.NettyPacingHooks",
            "dev.ccagent.agent.netty.NettySendLoopTelemetry",
            "dev.ccagent.agent.netty.NettyAlgorithmChoice",
            "dev.ccagent.agent.netty.NettyHooks");

    /** Per Netty loader that got copies or could not: null when every feature runs there, else why not. */
    private static final Map<ClassLoader, String> PREPARED = Collections.synchronizedMap(new WeakHashMap<>());

    /** A Netty type every feature beyond the algorithm choice links against. */
    static final String PROBE = "io.netty.channel.Channel";

    /** Per Netty class (a channel's, a handler context's): whether the agent's helpers link against its Netty. */
    private static final ClassValue<Boolean> LINKED = new ClassValue<>() {
        @Override
        protected Boolean computeValue(Class<?> type) {
            return unlinkedReason(type.getClassLoader()) == null;
        }
    };

    private NettyLinkage() {
    }

    /**
     * Null when the agent's Netty helpers link against the Netty of {@code nettyLoader} (the same
     * classes); else why not, naming the loader.
     */
    static String unlinkedReason(ClassLoader nettyLoader) {
        ClassLoader ours = NettyLinkage.class.getClassLoader();
        Class<?> theirs;
        try {
            theirs = Class.forName(PROBE, false, nettyLoader);
        } catch (ClassNotFoundException | LinkageError e) {
            return PROBE + " is not visible from " + loaderName(nettyLoader);
        }
        Class<?> seen;
        try {
            seen = Class.forName(PROBE, false, ours);
        } catch (ClassNotFoundException | LinkageError e) {
            seen = null;
        }
        if (seen == theirs) {
            return null;
        }
        return "Netty is defined by " + loaderName(nettyLoader) + ", which the agent's class loader ("
                + loaderName(ours) + ") " + (seen == null ? "cannot see" : "sees as another copy of Netty");
    }

    /**
     * Prepares {@code nettyLoader} (the loader that defines a Netty QUIC's classes) once: nothing
     * when the agent's own copies link against its Netty, else copies of {@link #HELPERS} defined
     * in it and verified.
     *
     * @return null when every Netty feature runs in that loader; else why only the algorithm choice does
     */
    static String prepare(ClassLoader nettyLoader) {
        synchronized (PREPARED) {
            if (PREPARED.containsKey(nettyLoader)) {
                return PREPARED.get(nettyLoader);
            }
            String reason = unlinkedReason(nettyLoader);
            if (reason != null && nettyLoader != null) {
                reason = defineIn(nettyLoader, reason);
            }
            if (nettyLoader != null) {
                PREPARED.put(nettyLoader, reason);
            }
            return reason;
        }
    }

    private static String defineIn(ClassLoader nettyLoader, String unlinked) {
        ClassLoader ours = NettyLinkage.class.getClassLoader();
        String where = loaderName(nettyLoader);
        // 1. the agent state the copies share must be reachable, and be ours, from Netty's loader
        try {
            for (Class<?> shared : new Class<?>[] {dev.ccagent.agent.runtime.AgentRuntime.class,
                    dev.ccagent.agent.connection.SendTelemetry.class, dev.ccagent.agent.detect.SpinDetector.class,
                    dev.ccagent.agent.config.AgentConfig.class}) {
                Class<?> seen = Class.forName(shared.getName(), false, nettyLoader);
                if (seen != shared) {
                    return unlinked + "; " + where + " has its own copy of " + shared.getName()
                            + " (another ccagent jar inside the application?)";
                }
            }
        } catch (ClassNotFoundException | LinkageError e) {
            return unlinked + "; the agent's classes are not visible from " + where + ": " + e;
        }
        try {
            // 2. define the copies in Netty's loader (NettyHooks last)
            List<String> defined = HelperInjector.inject(nettyLoader, ours, HELPERS,
                    NettyLinkage.class.getProtectionDomain());
            if (!defined.isEmpty()) {
                AgentLog.debug("netty helpers defined in " + where + ": " + defined);
            }
            // 3. verify: the advice's name resolves to the copy, the pacer is that loader's handler,
            //    every signature resolves now (a LinkageError here, not on a connection)
            Class<?> hooks = Class.forName("dev.ccagent.agent.netty.NettyHooks", false, nettyLoader);
            if (hooks.getClassLoader() != nettyLoader) {
                return unlinked + "; " + where + " resolves the hooks from " + loaderName(hooks.getClassLoader())
                        + ", not its own copy";
            }
            Class<?> handler = Class.forName("io.netty.channel.ChannelDuplexHandler", false, nettyLoader);
            Class<?> pacer = Class.forName("dev.ccagent.agent.netty.NettyPacer", false, nettyLoader);
            if (!handler.isAssignableFrom(pacer)) {
                return unlinked + "; the pacer defined in " + where + " is not its ChannelDuplexHandler";
            }
            for (String name : HELPERS) {
                Class<?> c = Class.forName(name, false, nettyLoader);
                for (Method m : c.getDeclaredMethods()) {
                    m.getParameterTypes();
                    m.getReturnType();
                }
                c.getDeclaredConstructors();
                c.getDeclaredFields();
            }
            Class<?> linkage = Class.forName("dev.ccagent.agent.netty.NettyLinkage", true, nettyLoader);
            Method check = linkage.getDeclaredMethod("unlinkedReason", ClassLoader.class);
            check.setAccessible(true);
            Object left = check.invoke(null, nettyLoader);
            if (left != null) {
                return unlinked + "; the copies in " + where + " still do not link: " + left;
            }
            Class.forName(hooks.getName(), true, nettyLoader);
            return null;
        } catch (Exception | LinkageError e) {
            return unlinked + "; the helpers could not be defined in " + where + ": " + e;
        }
    }

    /** Whether the Netty features beyond the algorithm choice can run for this Netty object (a channel, a context). */
    static boolean linked(Object nettyObject) {
        return nettyObject != null && LINKED.get(nettyObject.getClass());
    }

    /** The features that do not run where {@link #prepare} did not succeed (for the module's verdict). */
    static final String SKIPPED_FEATURES = "pacing, path stats, arm metrics, connection summaries and CPU-spin "
            + "monitoring";

    static String loaderName(ClassLoader loader) {
        if (loader == null) {
            return "the bootstrap class loader";
        }
        String name = loader.getName();
        return (name != null ? name : loader.getClass().getName()) + "@" + Integer.toHexString(System.identityHashCode(loader));
    }
}
