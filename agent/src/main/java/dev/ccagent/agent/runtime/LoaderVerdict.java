package dev.ccagent.agent.runtime;

/**
 * A target module's verdict for one class loader, as its log line says it: applied, or skipped and why.
 *
 * @param library      the target library's short name, e.g. kwik
 * @param module       what the module covers, e.g. "kwik 0.10.x (tech.kwik.core)" or "fix.kwik-stream-stall"
 * @param version      the library's version as its jar tells it, or null when unknown
 * @param classLoader  the loader's name and identity hash
 * @param applied      whether the module applied there
 * @param reason       why it skipped, or what an applied verdict leaves out ("" for a plain applied)
 * @param epochMillis  when the module decided
 */
public record LoaderVerdict(String library, String module, String version, String classLoader, boolean applied,
                            String reason, long epochMillis) {

    /** A verdict made now. */
    public static LoaderVerdict now(String library, String module, String version, String classLoader, boolean applied,
                                    String reason) {
        return new LoaderVerdict(library, module, version, classLoader, applied, reason == null ? "" : reason,
                System.currentTimeMillis());
    }
}
