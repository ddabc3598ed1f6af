package dev.ccagent.report;

import dev.ccagent.report.stats.Comparison;
import dev.ccagent.report.stats.Quantiles;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The text and JSON forms of a {@link FleetReport} (schema in docs/report.md). */
public final class FleetOutput {

    /** Version of the JSON document. */
    public static final String SCHEMA = "ccagent-report/1";

    private FleetOutput() {
    }

    // ---- text

    /** One line per input that was skipped or had a problem, e.g. for stderr. */
    public static List<String> problemLines(FleetReport r) {
        List<String> out = new java.util.ArrayList<>();
        for (FleetReport.Input in : r.inputs()) {
            if (in.problem != null) {
                out.add(in.path + ": " + in.problem);
            }
        }
        return out;
    }

    public static String text(FleetReport r) {
        StringBuilder sb = new StringBuilder();
        long read = r.inputs().stream().filter(i -> i.duplicateOf == null && i.problem == null).count();
        long dup = r.inputs().stream().filter(i -> i.duplicateOf != null).count();
        long bad = r.inputs().stream().filter(i -> i.problem != null).count();
        sb.append(String.format(Locale.ROOT, "ccagent report: %d recording%s read", read, read == 1 ? "" : "s"));
        if (dup > 0) {
            sb.append(", ").append(dup).append(" skipped as duplicate");
        }
        if (bad > 0) {
            sb.append(", ").append(bad).append(" with problems");
        }
        sb.append(String.format(Locale.ROOT, "; %d connections in %d arm%s%n", r.connections(), r.arms().size(),
                r.arms().size() == 1 ? "" : "s"));
        sb.append("  time span judged: ").append(r.span()).append(", the first and last ccagent event written in the recordings read\n");
        for (FleetReport.Input in : r.inputs()) {
            if (in.duplicateOf != null) {
                sb.append("  ").append(in.path).append(": the same recording as ").append(in.duplicateOf)
                        .append(" - counted once\n");
            } else if (in.problem != null) {
                sb.append("  ").append(in.path).append(": PROBLEM: ").append(in.problem).append('\n');
            }
            if (!in.missingFields.isEmpty()) {
                sb.append("  ").append(in.path).append(": its ConnectionSummary events lack ")
                        .append(String.join(", ", in.missingFields))
                        .append(" (another agent version): figures from those fields are missing for its connections\n");
            }
        }
        if (r.duplicateSummaries() > 0) {
            sb.append("  ").append(r.duplicateSummaries())
                    .append(" connection summaries appeared in more than one recording (same agent instance, connection "
                            + "and sequence): counted once\n");
        }
        if (r.arms().isEmpty()) {
            sb.append("\nno connections found (no ConnectionSummary or CongestionState events)\n");
            fallbacks(sb, r); // a fallback may be why there are none
            moduleVerdicts(sb, r); // so may a skipped library
            return sb.toString();
        }
        sb.append('\n');
        if (r.baseline() == null) {
            sb.append("no comparison: ").append(r.baselineProblem()).append('\n');
        } else if (r.comparisons().isEmpty()) {
            sb.append("no comparison: only the baseline arm ").append(r.baseline().name).append(" is present\n");
        } else {
            sb.append(String.format(Locale.ROOT,
                    "VERDICTS against the baseline arm %s (Mann-Whitney two-sided, alpha %.2g per test = 0.05 / %d tests; "
                            + "95%% bootstrap CI of the ratio of medians, %d resamples, seed %d)%n",
                    r.baseline().name, r.alphaPerTest(), Math.max(1, r.comparisons().size() * FleetReport.METRICS.size()),
                    r.options().resamples, r.options().seed));
            for (FleetReport.ArmComparison ac : r.comparisons()) {
                sb.append(ac.arm.name).append(" vs ").append(ac.baseline.name).append(":\n");
                for (Comparison c : ac.metrics) {
                    sb.append("  ").append(verdictLine(c)).append('\n');
                }
            }
        }
        for (FleetReport.Arm a : r.arms().values()) {
            sb.append(String.format(Locale.ROOT, "%n%s%s: %d connection%s (%s)%n", a.name,
                    a == r.baseline() ? " [baseline]" : "", a.connections, a.connections == 1 ? "" : "s",
                    controllers(a)));
            sb.append("  goodput             ").append(distribution(a.goodput, FleetOutput::rate)).append('\n');
            sb.append("  goodput, left SS    ").append(distribution(a.goodputLeftSlowStart, FleetOutput::rate)).append('\n');
            sb.append(String.format(Locale.ROOT, "  RTT                 p50 %s, p95 %s (median over connections of each one's p50 / p95; n=%d)%n",
                    ms(Quantiles.ofSorted(a.rttP50Millis, 0.5)), ms(Quantiles.ofSorted(a.rttP95Millis, 0.5)),
                    a.rttP50Millis.length));
            sb.append(String.format(Locale.ROOT, "  loss rate           %s of bytes sent (median per connection %s, p90 %s; n=%d)%n",
                    pct(a.aggregateLossRate()), pct(Quantiles.ofSorted(a.lossRate, 0.5)),
                    pct(Quantiles.ofSorted(a.lossRate, 0.9)), a.lossRate.length));
            sb.append(String.format(Locale.ROOT, "  acknowledged        %s; app-limited median %s of lifetime%n",
                    RecordingReport.bytes((long) a.bytesAcked), pct(Quantiles.ofSorted(a.appLimitedShare, 0.5))));
            if (!a.secondsInMode.isEmpty()) {
                double total = a.secondsInMode.values().stream().mapToDouble(Double::doubleValue).sum();
                StringBuilder modes = new StringBuilder();
                a.secondsInMode.forEach((m, s) -> modes.append(modes.length() > 0 ? ", " : "")
                        .append(String.format(Locale.ROOT, "%s %.0f%%", m, total > 0 ? 100 * s / total : 0)));
                // periodic samples: a connection shorter than the period has at most one, so it adds no time
                sb.append("  modes               ").append(modes).append(String.format(Locale.ROOT,
                        " of %.1f s between periodic CongestionState samples, on %d of %d connections (shorter"
                                + " ones have no two samples)%n", total, a.modeTimedConnections, a.connections));
            }
            sb.append("  alarms              ").append(a.alarms.isEmpty() ? "none" : a.alarms.toString()).append('\n');
            if (a.pacingStalls > 0) {
                sb.append(String.format(Locale.ROOT,
                        "  pacing stalls       %d on %d connections; %d longer than the connection's median RTT "
                                + "(on %d connections) - information, not an alarm%n",
                        a.pacingStalls, a.connectionsWithStalls, a.stallsLongerThanRtt, a.connectionsWithLongStalls));
            }
        }
        for (FleetReport.Rollback rb : r.rollbacks()) {
            sb.append(String.format(Locale.ROOT, "%nguard rolled back %s at %s (%s): %s%n", rb.arm(), rb.time(),
                    rb.metric(), rb.evidence()));
        }
        loopSpins(sb, r);
        fallbacks(sb, r);
        moduleVerdicts(sb, r);
        return sb.toString();
    }

    /** Spins and allocation storms of event loops themselves (no connection blamed, so in no arm's alarms). */
    private static void loopSpins(StringBuilder sb, FleetReport r) {
        if (!r.loopAllocationStorms().isEmpty()) {
            sb.append(String.format(Locale.ROOT, "%nevent-loop allocation storms (a shared loop allocated at the storm rate;"
                    + " the loop serves other work too, no connection or arm blamed):%n"));
            for (FleetReport.LoopAllocationStorm s : r.loopAllocationStorms()) {
                sb.append(String.format(Locale.ROOT, "  %s loop \"%s\": %d window%s flagged, up to %d MB/s, %s to %s%n",
                        s.library, s.thread, s.windows, s.windows == 1 ? "" : "s", s.maxRate >> 20, s.first, s.last));
            }
        }
        if (r.loopSpins().isEmpty()) {
            return;
        }
        sb.append(String.format(Locale.ROOT, "%nevent-loop spins (a shared loop burned CPU while its QUIC connections"
                + " waited; no connection or arm blamed):%n"));
        for (FleetReport.LoopSpin s : r.loopSpins()) {
            sb.append(String.format(Locale.ROOT, "  %s %s loop \"%s\" %s: %.1f s at %.0f%% of a core, tasks %.3f s late, "
                            + "%d QUIC connection%s on it (%s); %s; at %s%n", s.since(), s.library(), s.thread(),
                    "polling".equals(s.kind()) ? "polling without work" : "blocked", s.seconds(), 100 * s.cpuShare(),
                    s.taskDelayNanos() / 1e9, s.connections(), s.connections() == 1 ? "" : "s", s.connectionIds(),
                    "ongoing".equals(s.endedBy()) ? "still ongoing when last recorded" : "ended by " + s.endedBy(),
                    s.topFrame()));
        }
    }

    /** Per target module: the class loaders it applied to, and every loader it skipped with the reason (nothing without verdicts). */
    private static void moduleVerdicts(StringBuilder sb, FleetReport r) {
        List<FleetReport.ModuleVerdicts> modules = r.moduleVerdicts();
        if (modules.isEmpty()) {
            return;
        }
        sb.append(String.format(Locale.ROOT, "%nmodule verdicts (each target module's verdict per class loader, once however"
                + " often the recordings repeat it):%n"));
        for (FleetReport.ModuleVerdicts m : modules) {
            sb.append(String.format(Locale.ROOT, "  %s%s: applied in %d class loader%s, skipped in %d%n", m.module,
                    m.version.isEmpty() ? "" : " version " + m.version, m.appliedLoaders,
                    m.appliedLoaders == 1 ? "" : "s", m.skipped()));
            m.skippedLoaders.forEach((reason, loaders) -> sb.append(String.format(Locale.ROOT, "    skipped in %s: %s%n",
                    String.join(", ", loaders), reason)));
        }
    }

    /** The fallbacks per cause, most frequent first (nothing when there were none). */
    private static void fallbacks(StringBuilder sb, FleetReport r) {
        if (r.fallbacks().isEmpty()) {
            return;
        }
        sb.append(String.format(Locale.ROOT, "%nfallbacks (a part of the agent failed or was refused; the connections"
                + " went on without it):%n"));
        for (FleetReport.FallbackCause f : r.fallbacks()) {
            sb.append(String.format(Locale.ROOT, "  %d of %s (%s), %s to %s: %s%n", f.count, f.where, f.exception,
                    f.first, f.last, f.consequence));
        }
    }

    /** One comparison as the text report prints it (metric, verdict, ratio with its CI, medians, p, n). */
    public static String verdictLine(Comparison c) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "%-26s %-25s", label(c.metric), c.verdict.text));
        if (c.interval != null) {
            sb.append(String.format(Locale.ROOT, " ratio %s (95%% CI %s-%s),", num(c.interval.estimate()),
                    num(c.interval.low()), num(c.interval.high())));
        }
        sb.append(String.format(Locale.ROOT, " medians %s vs %s, p=%s, n=%d/%d", value(c.metric, c.medianArm),
                value(c.metric, c.medianBaseline), p(c.test.p), c.nArm, c.nBaseline));
        String note = dataNote(c);
        return note.isEmpty() ? sb.toString() : sb.append("; ").append(note).toString();
    }

    /**
     * What more data would take, for "not enough data" and "no detectable difference"; empty otherwise.
     * An arm with no value at all gets no estimate of connections needed (there is nothing to scale).
     */
    static String dataNote(Comparison c) {
        if (c.verdict == Comparison.Verdict.NOT_ENOUGH_DATA) {
            if (c.nArm == 0 || c.nBaseline == 0) {
                String who = c.nArm == 0 && c.nBaseline == 0 ? "either arm" : c.nArm == 0 ? "the arm" : "the baseline";
                return "no connection of " + who + (c.metric.equals("goodput-left-slow-start")
                        ? " left slow start / STARTUP (transfers too short for this algorithm?)" : " has this figure");
            }
            return c.neededPerArm > 0
                    ? String.format(Locale.ROOT, "about %d connections per arm would detect a 10%% change", c.neededPerArm)
                    : "at least " + Comparison.MIN_PER_ARM + " connections per arm needed";
        }
        if (c.verdict == Comparison.Verdict.NO_DIFFERENCE) {
            String why = whyNoDifference(c);
            String need = c.neededPerArm > 0
                    ? String.format(Locale.ROOT, "a 10%% change would need about %d per arm", c.neededPerArm) : "";
            return why.isEmpty() ? need : need.isEmpty() ? why : why + "; " + need;
        }
        return "";
    }

    /**
     * Why "no detectable difference" stands beside an interval that excludes 1, which otherwise reads as a
     * contradiction: the rank test's p is not below the report's per-test alpha (the family's 0.05 shared among its
     * tests), or the test and the interval point in opposite directions. Empty when the interval spans 1.
     */
    static String whyNoDifference(Comparison c) {
        if (c.verdict != Comparison.Verdict.NO_DIFFERENCE || c.interval == null || !c.interval.excludes(1)) {
            return "";
        }
        if (!(c.test.p < c.alpha)) {
            return "not significant at alpha " + p(c.alpha) + " (" + Comparison.ALPHA
                    + " shared among the report's tests), though the 95% interval excludes 1";
        }
        return "the rank test and the interval point in opposite directions";
    }

    static String label(String metric) {
        switch (metric) {
            case "goodput":
                return "goodput";
            case "goodput-left-slow-start":
                return "goodput (left slow start)";
            case "rtt-p50":
                return "RTT p50";
            case "rtt-p95":
                return "RTT p95";
            case "loss-rate":
                return "loss rate";
            default:
                return metric;
        }
    }

    static String value(String metric, double v) {
        if (Double.isNaN(v)) {
            return "-";
        }
        if (metric.startsWith("goodput")) {
            return rate(v);
        }
        if (metric.startsWith("rtt")) {
            return ms(v);
        }
        return pct(v);
    }

    private static String controllers(FleetReport.Arm a) {
        StringBuilder sb = new StringBuilder();
        a.controllers.forEach((k, v) -> sb.append(sb.length() > 0 ? ", " : "").append(k).append(' ').append(v));
        return sb.toString();
    }

    private static String distribution(double[] sorted, java.util.function.DoubleFunction<String> f) {
        if (sorted.length == 0) {
            return "- (n=0)";
        }
        return String.format(Locale.ROOT, "p10 %s, p50 %s, p90 %s (n=%d)", f.apply(Quantiles.ofSorted(sorted, 0.1)),
                f.apply(Quantiles.ofSorted(sorted, 0.5)), f.apply(Quantiles.ofSorted(sorted, 0.9)), sorted.length);
    }

    static String rate(double bps) {
        return Double.isNaN(bps) ? "-" : RecordingReport.rate(bps);
    }

    static String ms(double v) {
        return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%.1f ms", v);
    }

    static String pct(double v) {
        return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%.2f%%", 100 * v);
    }

    static String num(double v) {
        if (Double.isNaN(v)) {
            return "-";
        }
        if (Double.isInfinite(v)) {
            return v > 0 ? "inf" : "-inf";
        }
        return String.format(Locale.ROOT, "%.3g", v);
    }

    static String p(double p) {
        return p < 1e-4 ? String.format(Locale.ROOT, "%.1e", p) : String.format(Locale.ROOT, "%.4f", p);
    }

    // ---- JSON

    public static String json(FleetReport r) {
        StringBuilder sb = new StringBuilder();
        sb.append("{\"schema\":").append(str(SCHEMA));
        sb.append(",\"seed\":").append(r.options().seed);
        sb.append(",\"resamples\":").append(r.options().resamples);
        sb.append(",\"confidence\":").append(dbl(Comparison.CONFIDENCE));
        sb.append(",\"alpha\":").append(dbl(Comparison.ALPHA));
        sb.append(",\"alphaPerTest\":").append(dbl(r.alphaPerTest()));
        sb.append(",\"minConnectionsPerArm\":").append(Comparison.MIN_PER_ARM);
        sb.append(",\"effectOfInterest\":").append(dbl(Comparison.EFFECT));
        sb.append(",\"inputs\":[");
        boolean first = true;
        for (FleetReport.Input in : r.inputs()) {
            sb.append(first ? "" : ",").append("{\"path\":").append(str(in.path.toString()))
                    .append(",\"status\":").append(str(in.status()))
                    .append(",\"events\":").append(in.events)
                    .append(",\"ccagentEvents\":").append(in.ccagentEvents)
                    .append(",\"connectionSummaries\":").append(in.summaries)
                    .append(",\"duplicateOf\":").append(in.duplicateOf == null ? "null" : str(in.duplicateOf.toString()))
                    .append(",\"problem\":").append(in.problem == null ? "null" : str(in.problem))
                    .append(",\"missingFields\":").append(strings(in.missingFields)).append('}');
            first = false;
        }
        sb.append("],\"span\":{\"first\":").append(r.spanFirst() == null ? "null" : str(r.spanFirst().toString()))
                .append(",\"last\":").append(r.spanLast() == null ? "null" : str(r.spanLast().toString()))
                .append(",\"seconds\":").append(r.spanFirst() == null || r.spanLast() == null ? "null"
                        : dbl(java.time.Duration.between(r.spanFirst(), r.spanLast()).toNanos() / 1e9)).append('}');
        sb.append(",\"duplicateSummaries\":").append(r.duplicateSummaries());
        sb.append(",\"connections\":").append(r.connections());
        sb.append(",\"baseline\":").append(r.baseline() == null ? "null" : str(r.baseline().name));
        sb.append(",\"baselineProblem\":").append(r.baselineProblem() == null ? "null" : str(r.baselineProblem()));
        sb.append(",\"arms\":[");
        first = true;
        for (FleetReport.Arm a : r.arms().values()) {
            sb.append(first ? "" : ",");
            arm(sb, a);
            first = false;
        }
        sb.append("],\"comparisons\":[");
        first = true;
        for (FleetReport.ArmComparison ac : r.comparisons()) {
            for (Comparison c : ac.metrics) {
                sb.append(first ? "" : ",").append("{\"arm\":").append(str(ac.arm.name))
                        .append(",\"baseline\":").append(str(ac.baseline.name))
                        .append(",\"metric\":").append(str(c.metric))
                        .append(",\"higherIsBetter\":").append(c.higherIsBetter)
                        .append(",\"n\":").append(c.nArm)
                        .append(",\"nBaseline\":").append(c.nBaseline)
                        .append(",\"median\":").append(dbl(c.medianArm))
                        .append(",\"medianBaseline\":").append(dbl(c.medianBaseline))
                        .append(",\"ratio\":").append(c.interval == null ? "null" : dbl(c.interval.estimate()))
                        .append(",\"ciLow\":").append(c.interval == null ? "null" : dbl(c.interval.low()))
                        .append(",\"ciHigh\":").append(c.interval == null ? "null" : dbl(c.interval.high()))
                        .append(",\"p\":").append(dbl(c.test.p))
                        .append(",\"exact\":").append(c.test.exact)
                        .append(",\"probabilityGreater\":").append(dbl(c.test.probabilityXGreater))
                        .append(",\"verdict\":").append(str(c.verdict.text))
                        .append(",\"connectionsNeededPerArm\":").append(c.neededPerArm > 0 ? Long.toString(c.neededPerArm) : "null")
                        .append('}');
                first = false;
            }
        }
        sb.append("],\"rollbacks\":[");
        first = true;
        for (FleetReport.Rollback rb : r.rollbacks()) {
            sb.append(first ? "" : ",").append("{\"time\":").append(str(rb.time().toString()))
                    .append(",\"arm\":").append(str(rb.arm())).append(",\"metric\":").append(str(rb.metric()))
                    .append(",\"evidence\":").append(str(rb.evidence())).append('}');
            first = false;
        }
        sb.append("],\"loopSpins\":[");
        first = true;
        for (FleetReport.LoopSpin s : r.loopSpins()) {
            sb.append(first ? "" : ",").append("{\"since\":").append(str(s.since().toString()))
                    .append(",\"library\":").append(str(s.library())).append(",\"thread\":").append(str(s.thread()))
                    .append(",\"kind\":").append(str(s.kind())).append(",\"seconds\":").append(dbl(s.seconds()))
                    .append(",\"cpuShare\":").append(dbl(s.cpuShare())).append(",\"taskDelayNanos\":").append(s.taskDelayNanos())
                    .append(",\"connections\":").append(s.connections()).append(",\"connectionIds\":").append(str(s.connectionIds()))
                    .append(",\"topFrame\":").append(str(s.topFrame())).append(",\"endedBy\":").append(str(s.endedBy())).append('}');
            first = false;
        }
        sb.append("],\"loopAllocationStorms\":[");
        first = true;
        for (FleetReport.LoopAllocationStorm s : r.loopAllocationStorms()) {
            sb.append(first ? "" : ",").append("{\"library\":").append(str(s.library)).append(",\"thread\":").append(str(s.thread))
                    .append(",\"windows\":").append(s.windows).append(",\"maxRate\":").append(s.maxRate)
                    .append(",\"first\":").append(str(s.first.toString())).append(",\"last\":").append(str(s.last.toString()))
                    .append('}');
            first = false;
        }
        sb.append("],\"fallbacks\":[");
        first = true;
        for (FleetReport.FallbackCause f : r.fallbacks()) {
            sb.append(first ? "" : ",").append("{\"where\":").append(str(f.where))
                    .append(",\"exception\":").append(str(f.exception)).append(",\"count\":").append(f.count)
                    .append(",\"first\":").append(str(f.first.toString())).append(",\"last\":").append(str(f.last.toString()))
                    .append(",\"consequence\":").append(str(f.consequence)).append('}');
            first = false;
        }
        sb.append("],\"exitStatus\":").append(r.exitStatus()).append("}\n");
        return sb.toString();
    }

    private static void arm(StringBuilder sb, FleetReport.Arm a) {
        sb.append("{\"arm\":").append(str(a.name)).append(",\"label\":").append(str(a.label))
                .append(",\"algorithm\":").append(str(a.algorithm))
                .append(",\"connections\":").append(a.connections)
                .append(",\"fromSummaries\":").append(a.fromSummaries)
                .append(",\"fromCongestionState\":").append(a.fromStates)
                .append(",\"controllers\":{");
        boolean first = true;
        for (Map.Entry<String, Integer> e : a.controllers.entrySet()) {
            sb.append(first ? "" : ",").append(str(e.getKey())).append(':').append(e.getValue());
            first = false;
        }
        sb.append("},\"bytesSent\":").append(dbl(a.bytesSent))
                .append(",\"bytesAcked\":").append(dbl(a.bytesAcked))
                .append(",\"bytesLost\":").append(dbl(a.bytesLost))
                .append(",\"goodputBps\":{\"all\":").append(dist(a.goodput))
                .append(",\"leftSlowStart\":").append(dist(a.goodputLeftSlowStart)).append('}')
                .append(",\"rttP50Ms\":").append(dist(a.rttP50Millis))
                .append(",\"rttP95Ms\":").append(dist(a.rttP95Millis))
                .append(",\"lossRate\":{\"aggregate\":").append(dbl(a.aggregateLossRate()))
                .append(",\"perConnection\":").append(dist(a.lossRate)).append('}')
                .append(",\"appLimitedShare\":").append(dist(a.appLimitedShare))
                .append(",\"secondsInMode\":{");
        first = true;
        for (Map.Entry<String, Double> e : a.secondsInMode.entrySet()) {
            sb.append(first ? "" : ",").append(str(e.getKey())).append(':').append(dbl(e.getValue()));
            first = false;
        }
        sb.append("},\"modeTimedConnections\":").append(a.modeTimedConnections);
        sb.append(",\"alarms\":{");
        first = true;
        for (Map.Entry<String, Integer> e : a.alarms.entrySet()) {
            sb.append(first ? "" : ",").append(str(e.getKey())).append(':').append(e.getValue());
            first = false;
        }
        sb.append("},\"pacingStalls\":{\"count\":").append(a.pacingStalls)
                .append(",\"connections\":").append(a.connectionsWithStalls)
                .append(",\"longerThanRtt\":").append(a.stallsLongerThanRtt)
                .append(",\"connectionsLongerThanRtt\":").append(a.connectionsWithLongStalls).append("}}");
    }

    private static String dist(double[] sorted) {
        double mean = 0;
        for (double v : sorted) {
            mean += v;
        }
        mean = sorted.length > 0 ? mean / sorted.length : Double.NaN;
        return "{\"n\":" + sorted.length + ",\"mean\":" + dbl(mean) + ",\"p10\":" + dbl(Quantiles.ofSorted(sorted, 0.1))
                + ",\"p25\":" + dbl(Quantiles.ofSorted(sorted, 0.25)) + ",\"p50\":" + dbl(Quantiles.ofSorted(sorted, 0.5))
                + ",\"p75\":" + dbl(Quantiles.ofSorted(sorted, 0.75)) + ",\"p90\":" + dbl(Quantiles.ofSorted(sorted, 0.9))
                + ",\"p95\":" + dbl(Quantiles.ofSorted(sorted, 0.95)) + "}";
    }

    /** A JSON number: null for NaN and infinities; integers without a fraction; otherwise 6 significant digits. */
    static String dbl(double v) {
        if (Double.isNaN(v) || Double.isInfinite(v)) {
            return "null";
        }
        if (v == Math.rint(v) && Math.abs(v) < 1e15) {
            return Long.toString((long) v);
        }
        return String.format(Locale.ROOT, "%.6g", v).replaceFirst("\\.?0+(e|$)", "$1");
    }

    private static String strings(java.util.Collection<String> values) {
        StringBuilder sb = new StringBuilder("[");
        for (String s : values) {
            sb.append(sb.length() > 1 ? "," : "").append(str(s));
        }
        return sb.append(']').toString();
    }

    static String str(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.append('"').toString();
    }
}
