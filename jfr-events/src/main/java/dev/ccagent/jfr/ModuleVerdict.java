package dev.ccagent.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.Period;
import jdk.jfr.StackTrace;
import jdk.jfr.Timestamp;

/**
 * A target module's verdict for a class loader: applied, or skipped and why (an unsupported version, a
 * loader that cannot see the agent's classes, the library on the module path, a linkage failure), the
 * same as the module's log line. Committed when the verdict is made, and every verdict the agent still
 * keeps again at each chunk start, so that a recording started later holds them too.
 */
@Period("beginChunk") // the chunk-start repeats; the agent commits the verdict itself when it is made
@StackTrace(false)
@Name(EventNames.MODULE_VERDICT)
@Label("Module Verdict")
@Description("A target module applied to a class loader or skipped it and why, as its log line says; at the verdict "
        + "and again at every chunk start (kind), so that every recording holds the agent's verdicts")
@Category({"QUIC", "Agent"})
public final class ModuleVerdict extends jdk.jfr.Event {

    @Label("Kind")
    @Description("at verdict (committed when the module decided), chunk start (a verdict made earlier, repeated"
            + " at the start of a chunk; the same verdict time identifies it)")
    public String kind;

    @Label("Library")
    @Description("Target library, e.g. kwik or netty")
    public String library;

    @Label("Module")
    @Description("What the module covers, e.g. kwik 0.10.x (tech.kwik.core), or fix.kwik-stream-stall")
    public String module;

    @Label("Library Version")
    @Description("The library's version as its jar tells it; empty when unknown")
    public String libraryVersion;

    @Label("Class Loader")
    @Description("The class loader's name (or class) and identity hash")
    public String classLoader;

    @Label("Verdict")
    @Description("applied or skipped")
    public String verdict;

    @Label("Reason")
    @Description("Why it skipped, or what an applied verdict leaves out; empty for a plain applied")
    public String reason;

    @Label("Verdict Time")
    @Description("When the module decided")
    @Timestamp(Timestamp.MILLISECONDS_SINCE_EPOCH)
    public long verdictTime;
}
