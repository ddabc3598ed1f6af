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

    /**
     * What an applied verdict's text says beyond "applied": "the algorithm choice only; ..." of
     * "applied: the algorithm choice only; ...", "on by default: ..." of "applied (on by default: ...)", "" of
     * "applied"; a text that does not begin with "applied" (the observe-only module's) whole.
     */
    public static String appliedDetail(String verdict) {
        if (!verdict.startsWith("applied")) {
            return verdict;
        }
        String rest = verdict.substring("applied".length());
        if (rest.startsWith(": ")) {
            return rest.substring(2);
        }
        if (rest.startsWith(" (") && rest.endsWith(")")) {
            return rest.substring(2, rest.length() - 1);
        }
        return rest.trim();
    }

    /** A verdict made now. */
    public static LoaderVerdict now(String library, String module, String version, String classLoader, boolean applied,
                                    String reason) {
        return new LoaderVerdict(library, module, version, classLoader, applied, reason == null ? "" : reason,
                System.currentTimeMillis());
    }
}
