package dev.ccagent.agent.instrument;

import dev.ccagent.agent.config.AgentArgs;
import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.netty.NettyModule;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.matcher.ElementMatcher;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.lang.instrument.ClassFileTransformer;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every target module's matchers ask the type before the class-loader check (issue #24): the loader
 * check records a verdict ("applied") and may define helpers, so a class loader that only loads
 * other classes (and sees the library through its parent) must never reach it. Byte Buddy's own
 * {@code type(type, loader)} asks the loader first. Each module's transformations are built into a
 * raw transformer (not installed) and offered a class that none of them targets, from a child loader.
 */
class TypeBeforeLoaderTest {

    @Test
    void noModuleAsksTheLoaderForAClassItDoesNotTarget() throws Exception {
        AgentConfig config = AgentArgs.parse("cc=bbr1;fix.kwik-stream-stall=on").config(); // detect: on by default
        List<TargetModule> modules = new ArrayList<>(Installer.modules(config));
        byte[] bytes;
        try (InputStream in = TypeBeforeLoaderTest.class.getResourceAsStream("TypeBeforeLoaderTest.class")) {
            bytes = in.readAllBytes();
        }
        List<String> askedFor = new ArrayList<>();
        try (URLClassLoader child = new URLClassLoader("child", new URL[0], TypeBeforeLoaderTest.class.getClassLoader())) {
            for (TargetModule m : modules) {
                AtomicInteger asked = new AtomicInteger();
                ElementMatcher<ClassLoader> loaderCheck = loader -> {
                    asked.incrementAndGet();
                    return false;
                };
                // the instrumentation and the fixes of the libraries' own bugs (their own transformer)
                for (ClassFileTransformer t : List.of(m.extend(new AgentBuilder.Default(), loaderCheck).makeRaw(),
                        m.extendFixes(new AgentBuilder.Default(), loaderCheck).makeRaw())) {
                    t.transform(child, TypeBeforeLoaderTest.class.getName().replace('.', '/'), null, null, bytes);
                }
                if (asked.get() > 0) {
                    askedFor.add(m.description() + " (" + asked.get() + "x)");
                }
            }
        }
        assertEquals(List.of(), askedFor, "modules whose loader check ran for a class they do not target");
        assertTrue(modules.stream().anyMatch(m -> m instanceof NettyModule), "a Netty module was checked");
        assertTrue(modules.stream().anyMatch(m -> m.library().equals("kwik")), "the kwik modules were checked");
    }
}
