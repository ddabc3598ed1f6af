package dev.ccagent.cc;

import java.util.List;

/**
 * An extension point for algorithms that are not part of ccagent: a jar on the application class
 * path that lists an implementation in
 * {@code META-INF/services/dev.ccagent.cc.AlgorithmProvider} adds its algorithms to
 * {@link dev.ccagent.cc.registry.Algorithms}, under their own names, with their own options. Providers are loaded once,
 * from the system class loader, when the registry is first used (at agent start-up).
 *
 * <p>A provider's name must not clash with a built-in algorithm (built-ins win; the clash is
 * reported by {@link dev.ccagent.cc.registry.Algorithms#extensionProblems()}), and a provider that fails to load is skipped
 * the same way: a broken extension never takes the built-in algorithms down.
 *
 * <p>The test suite uses it to inject a deliberately broken algorithm ({@code faulty-zero-rate})
 * into a real server without shipping it in the product.
 */
public interface AlgorithmProvider {

    /** The algorithms this provider contributes. */
    List<AlgorithmDescriptor> algorithms();
}
