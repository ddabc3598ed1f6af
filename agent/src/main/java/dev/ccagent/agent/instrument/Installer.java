package dev.ccagent.agent.instrument;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.kwik.KwikModule;
import dev.ccagent.agent.log.AgentLog;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.agent.builder.ResettableClassFileTransformer;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.DynamicType;
import net.bytebuddy.utility.JavaModule;

import java.lang.instrument.Instrumentation;
import java.util.ArrayList;
import java.util.List;

import static net.bytebuddy.matcher.ElementMatchers.nameStartsWith;

/**
 * Builds one Byte Buddy {@link AgentBuilder} from the target modules the configuration selects and
 * installs it, retransforming classes already loaded (late attach). Every transformation error is
 * logged; none propagates into the host.
 */
public final class Installer {

    private Installer() {
    }

    /** The modules for a configuration, one per target library and version range. */
    public static List<TargetModule> modules(AgentConfig config) {
        List<TargetModule> modules = new ArrayList<>();
        if (config.targets("kwik")) {
            KwikModule kwik = new KwikModule(config);
            modules.add(kwik);
            // where the swap cannot apply: each feature that needs no swap, with its own requirements
            if (config.detect()) {
                modules.add(new dev.ccagent.agent.kwik.KwikObserveModule(config, kwik));
            }
            if (config.fixKwikStreamStall()) {
                modules.add(new dev.ccagent.agent.kwik.KwikStreamStallFixModule(kwik));
            }
        }
        if (config.targets("netty")) {
            modules.add(dev.ccagent.agent.netty.NettyModule.netty42(config));
            modules.add(dev.ccagent.agent.netty.NettyModule.incubator(config));
        }
        return modules;
    }

    /** Installs the modules; returns the transformer (to reset on detach). */
    public static ResettableClassFileTransformer install(Instrumentation inst, List<TargetModule> modules) {
        AgentBuilder builder = new AgentBuilder.Default()
                .disableClassFormatChanges()
                .with(AgentBuilder.RedefinitionStrategy.RETRANSFORMATION)
                .with(new RetransformLogger())
                .with(AgentBuilder.TypeStrategy.Default.REDEFINE)
                .with(new TransformLogger())
                .ignore(nameStartsWith("dev.ccagent.").or(nameStartsWith("java.")).or(nameStartsWith("jdk."))
                        .or(nameStartsWith("sun.")).or(nameStartsWith("com.sun.")));
        for (TargetModule m : modules) {
            builder = m.extend(builder, m.loaderCheck());
        }
        return builder.installOn(inst);
    }

    /** Logs each transformation: what was instrumented (debug) and every error (warn). */
    static final class TransformLogger extends AgentBuilder.Listener.Adapter {
        @Override
        public void onTransformation(TypeDescription type, ClassLoader loader, JavaModule module, boolean loaded,
                                     DynamicType dynamicType) {
            AgentLog.debug("instrumented " + type.getName() + (loaded ? " (retransformed)" : ""));
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
