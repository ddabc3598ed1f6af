package dev.ccagent.agent.netty;

import dev.ccagent.agent.config.AgentArgs;
import dev.ccagent.agent.runtime.AgentRuntime;
import org.junit.jupiter.api.Test;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;

import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.Set;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Netty modules' class-loader linkage check, against real Netty jars: the Netty the agent's own
 * loader sees links as it is; a Netty defined again by a child loader that sees the agent (as a Spring
 * Boot jar's {@code BOOT-INF/lib} or a web application holds its own Netty) gets the agent's helpers
 * defined in that loader, linked against its Netty, and every feature; a loader that does not see the
 * agent keeps the algorithm choice only, and the module's verdict says so, naming that loader.
 */
class NettyLinkageTest {

    /** The classes of the package that only the installer uses (they stay in the agent's loader). */
    static final Set<String> INSTALL_TIME = Set.of("NettyModule", "NettyLibrary", "LambdaBodies",
            "QuicheTypeInstrumentation", "QuicheConfigInstrumentation", "QuicheServerCodecInstrumentation",
            "QuicheChannelInstrumentation", "QuicheConnectionInstrumentation", "QuicheCodecInstrumentation",
            "QuicheConnNewSubstitution", "NettyObserveModule", "QuicheChannelObserveInstrumentation");

    /**
     * Observe-only's runtime class: it runs from the agent's own loader whichever loader defines Netty (its
     * module does no linkage), so it may name no Netty type (it reaches Netty through method handles).
     */
    static final Set<String> OBSERVE = Set.of("NettyObserveWatch");

    private static URL[] nettyJars() {
        return new URL[] {
            io.netty.channel.Channel.class.getProtectionDomain().getCodeSource().getLocation(),
            io.netty.util.AttributeMap.class.getProtectionDomain().getCodeSource().getLocation(),
            io.netty.buffer.ByteBuf.class.getProtectionDomain().getCodeSource().getLocation(),
            io.netty.resolver.AddressResolver.class.getProtectionDomain().getCodeSource().getLocation()};
    }

    /** A loader that defines its own Netty (child first for io.netty) and delegates everything else to the agent's loader. */
    static final class NettyFirstLoader extends URLClassLoader {
        NettyFirstLoader(String name, URL[] urls, ClassLoader parent) {
            super(name, urls, parent);
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (!name.startsWith("io.netty.")) {
                return super.loadClass(name, resolve);
            }
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null) {
                    c = findClass(name);
                }
                return c;
            }
        }
    }

    @Test
    void everyRuntimeClassOfThePackageIsAHelperAndHelpersNeedOnlyHelpers() {
        JavaClasses classes = new ClassFileImporter()
                .withImportOption(com.tngtech.archunit.core.importer.ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("dev.ccagent.agent.netty");
        Set<String> helpers = new TreeSet<>();
        for (String h : NettyLinkage.HELPERS) {
            helpers.add(h.substring(h.lastIndexOf('.') + 1));
        }
        assertEquals("dev.ccagent.agent.netty.NettyHooks", NettyLinkage.HELPERS.get(NettyLinkage.HELPERS.size() - 1),
                "the advice's entry point is defined last");
        for (JavaClass c : classes) {
            if (!c.getPackageName().equals("dev.ccagent.agent.netty") || c.getSimpleName().endsWith("Test")
                    || c.getName().contains("Test$") || c.getName().contains("$")) {
                continue;
            }
            String simple = c.getSimpleName();
            if (OBSERVE.contains(simple)) {
                assertFalse(helpers.contains(simple) || INSTALL_TIME.contains(simple), simple);
                for (Dependency d : c.getDirectDependenciesFromSelf()) {
                    assertFalse(d.getTargetClass().getPackageName().startsWith("io.netty"),
                            simple + " (observe-only, in the agent's loader) uses " + d.getTargetClass().getName());
                }
                continue;
            }
            assertTrue(helpers.contains(simple) ^ INSTALL_TIME.contains(simple),
                    simple + " must be either a helper (runs in a server, defined in Netty's loader) or install-time");
            if (!helpers.contains(simple)) {
                continue;
            }
            for (Dependency d : c.getDirectDependenciesFromSelf()) {
                JavaClass target = d.getTargetClass();
                if (target.getPackageName().equals("dev.ccagent.agent.netty")) {
                    String top = target.getName().substring("dev.ccagent.agent.netty.".length()).replaceAll("\\$.*", "");
                    assertTrue(helpers.contains(top), simple + " (a helper) uses " + target.getName()
                            + ", which is not one: its copy in Netty's loader could not reach it");
                }
            }
        }
    }

    @Test
    void aChildLoaderThatSeesTheAgentGetsTheHelpersAndEveryFeature() throws Exception {
        dev.ccagent.agent.instrument.HelperInjector.init(net.bytebuddy.agent.ByteBuddyAgent.install());
        try (URLClassLoader boot = new NettyFirstLoader("BOOT-INF-lib", nettyJars(), NettyLinkage.class.getClassLoader())) {
            Class<?> theirChannel = Class.forName(NettyLinkage.PROBE, false, boot);
            assertTrue(theirChannel != io.netty.channel.Channel.class, "the test loader defines its own Netty");
            assertNotNull(NettyLinkage.unlinkedReason(boot), "the agent's own copies do not link against it");
            assertEquals("applied", NettyModule.netty42(null).appliedVerdict(boot));
            Class<?> hooks = Class.forName("dev.ccagent.agent.netty.NettyHooks", false, boot);
            assertSame(boot, hooks.getClassLoader(), "the advice's name resolves to the copy in Netty's loader");
            assertTrue(Class.forName("io.netty.channel.ChannelDuplexHandler", false, boot)
                    .isAssignableFrom(Class.forName("dev.ccagent.agent.netty.NettyPacer", false, boot)));
            assertSame(AgentRuntime.class, Class.forName(AgentRuntime.class.getName(), false, boot),
                    "one agent state: the copies share the agent's runtime");
            // the copies' hooks run for that loader's channels (the agent's copies would not)
            Object channel = boot.loadClass("io.netty.channel.embedded.EmbeddedChannel").getConstructor().newInstance();
            assertFalse(NettyLinkage.linked(channel));
            Class<?> linkage = Class.forName("dev.ccagent.agent.netty.NettyLinkage", false, boot);
            Method linked = linkage.getDeclaredMethod("linked", Object.class);
            linked.setAccessible(true);
            assertEquals(Boolean.TRUE, linked.invoke(null, channel));
            AgentRuntime.setConfig(AgentArgs.parse("netty.pacing=on;detect=on;log=off").config());
            try {
                long fallbacks = AgentRuntime.fallbacks();
                assertEquals(Boolean.FALSE, hooks.getMethod("skipSend", Object.class).invoke(null, channel));
                assertEquals(fallbacks, AgentRuntime.fallbacks(), "skipSend ran against that loader's Channel");
            } finally {
                AgentRuntime.setConfig(null);
            }
            // prepared once: a second verdict defines nothing again
            assertEquals("applied", NettyModule.incubator(null).appliedVerdict(boot));
        }
    }

    @Test
    void theNettyTheAgentSeesLinks() {
        ClassLoader ours = NettyLinkage.class.getClassLoader();
        assertNull(NettyLinkage.unlinkedReason(ours));
        assertTrue(NettyLinkage.linked(new io.netty.channel.embedded.EmbeddedChannel()));
        assertFalse(NettyLinkage.linked(null));
        assertTrue("applied".equals(NettyModule.netty42(null).appliedVerdict(ours)));
    }

    @Test
    void aNettyInALoaderThatDoesNotSeeTheAgentKeepsTheAlgorithmChoiceOnly() throws Exception {
        try (URLClassLoader boot = new URLClassLoader("BOOT-INF-lib", nettyJars(), ClassLoader.getPlatformClassLoader())) {
            Class<?> theirChannel = Class.forName(NettyLinkage.PROBE, false, boot);
            assertTrue(theirChannel != io.netty.channel.Channel.class, "the test loader defines its own Netty");
            String reason = NettyLinkage.unlinkedReason(boot);
            assertNotNull(reason);
            assertTrue(reason.contains("BOOT-INF-lib@") && reason.contains("another copy of Netty"), reason);
            String verdict = NettyModule.netty42(null).appliedVerdict(boot);
            assertTrue(verdict.startsWith("applied: the algorithm choice only; pacing, path stats, arm metrics,"
                    + " connection summaries and CPU-spin monitoring are skipped there: Netty is defined by BOOT-INF-lib@"),
                    verdict);
            assertTrue(verdict.contains("; the agent's classes are not visible from BOOT-INF-lib@"), verdict);
            // a channel of that Netty: with pacing and detection on, the hooks of the features that link
            // against Netty do nothing for it, and nothing counts as a fallback
            Object channel = boot.loadClass("io.netty.channel.embedded.EmbeddedChannel").getConstructor().newInstance();
            assertFalse(NettyLinkage.linked(channel));
            AgentRuntime.setConfig(AgentArgs.parse("netty.pacing=on;detect=on;log=off").config());
            try {
                long fallbacks = AgentRuntime.fallbacks();
                NettyHooks.onSendInfo(java.nio.ByteBuffer.allocate(512)); // a send time of 0 is "now": no hold anyway
                assertFalse(NettyHooks.holdSendLoop(channel));
                assertFalse(NettyHooks.skipSend(channel));
                assertEquals(-1, NettyHooks.sendEnter(channel));
                NettyHooks.datagramWritten(channel);
                assertEquals(fallbacks, AgentRuntime.fallbacks(), "no fallback counted for a channel of another Netty");
                // the same calls with the agent's own Netty do run (skipSend casts to Channel and looks up the pacer)
                Object own = new io.netty.channel.embedded.EmbeddedChannel();
                assertFalse(NettyHooks.skipSend(own));
                assertEquals(fallbacks, AgentRuntime.fallbacks());
            } finally {
                NettyPacingHooks.endSendLoop();
                AgentRuntime.setConfig(null);
            }
        }
        try (URLClassLoader none = new URLClassLoader("no-netty", new URL[0], ClassLoader.getPlatformClassLoader())) {
            assertTrue(NettyLinkage.unlinkedReason(none).contains("not visible from no-netty@"));
        }
    }
}
