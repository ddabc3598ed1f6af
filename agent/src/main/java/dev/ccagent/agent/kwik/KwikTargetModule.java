package dev.ccagent.agent.kwik;

import dev.ccagent.agent.instrument.TargetModule;

/**
 * What the kwik modules (the controller swap, the observe-only spin watch, the stream-stall fix) share:
 * the library they belong to, how they name it, and where kwik's version is read from (its Maven
 * metadata, found beside {@code SenderImpl} in the loader that defines kwik).
 */
abstract class KwikTargetModule extends TargetModule {

    @Override
    public final String library() {
        return "kwik";
    }

    /** Any kwik class: a server that has started but served no connection has loaded no {@code SenderImpl} yet. */
    @Override
    public String packagePrefix() {
        return "tech.kwik.";
    }

    @Override
    public String description() {
        return "kwik 0.10.x (tech.kwik.core)";
    }

    @Override
    protected String versionIn(ClassLoader loader) {
        return mavenVersion(loader, "tech.kwik", "kwik", KwikReflection.SENDER_IMPL);
    }
}
