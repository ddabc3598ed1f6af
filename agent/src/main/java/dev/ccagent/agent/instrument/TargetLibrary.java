package dev.ccagent.agent.instrument;

import dev.ccagent.agent.config.AgentConfig;

import java.util.List;

/**
 * One target library (kwik, Netty QUIC): its package under {@code dev.ccagent.agent} provides one
 * implementation, listed in {@code META-INF/services/dev.ccagent.agent.instrument.TargetLibrary}, the
 * only place the agent's core learns which libraries exist ({@link Installer} finds them with
 * {@link java.util.ServiceLoader}). The core never names a library's classes; each library's package
 * depends on the core, never the reverse (checked by {@code PackageDependenciesTest}).
 */
public interface TargetLibrary {

    /** The library's short name as used by {@code targets=}: {@code kwik}, {@code netty}. */
    String name();

    /**
     * The modules for a configuration that targets this library, one per instrumented feature and
     * version range, each with its requirement checks and its class-loader linkage check.
     */
    List<TargetModule> modules(AgentConfig config);
}
