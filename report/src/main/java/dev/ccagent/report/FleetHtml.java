package dev.ccagent.report;

import dev.ccagent.report.stats.Comparison;
import dev.ccagent.report.stats.Quantiles;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.DoubleUnaryOperator;

/**
 * A self-contained HTML page for a {@link FleetReport}, drawn with inline SVG (no scripts, no external
 * resources), readable at thousands of connections: the verdict table first, then per-arm CDFs (one line
 * per arm, not per connection) and per-arm time series as a median with a p10-p90 band.
 */
public final class FleetHtml {

    static final String[] COLORS = {"#1f5fa8", "#d9480f", "#2b8a3e", "#862e9c", "#c92a2a", "#5c940d", "#0b7285",
        "#e67700"};
    static final int CDF_POINTS = 300;
    static final int W = 620;
    static final int H = 300;
    static final int ML = 64;
    static final int MR = 16;
    static final int MT = 28;
    static final int MB = 44;

    private FleetHtml() {
    }

    /** The baseline arm gets the first colour, the other arms the next ones in name order. */
    static String color(FleetReport r, FleetReport.Arm arm) {
        if (arm == r.baseline()) {
            return COLORS[0];
        }
        int i = r.baseline() == null ? 0 : 1;
        for (FleetReport.Arm a : r.arms().values()) {
            if (a == arm) {
                return COLORS[i % COLORS.length];
            }
            if (a != r.baseline()) {
                i++;
            }
        }
        return COLORS[0];
    }

    public static void write(FleetReport r, Path out) throws IOException {
        Files.writeString(out, page(r), StandardCharsets.UTF_8);
    }

    static String page(FleetReport r) {
        StringBuilder h = new StringBuilder();
        h.append("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>ccagent canary report</title><style>")
                .append("body{font-family:system-ui,sans-serif;margin:1.5em 2em;color:#222}")
                .append("table{border-collapse:collapse;margin:.5em 0 1.2em}td,th{border:1px solid #ccc;padding:3px 8px;")
                .append("text-align:right;font-size:13px;white-space:nowrap}th{background:#f1f3f5;white-space:normal}")
                .append("td.l,th.l{text-align:left}td.w{white-space:normal;min-width:170px;max-width:240px}td.ww{white-space:normal;max-width:160px}td.wl{white-space:normal;min-width:240px;max-width:460px}.v{font-weight:600;border-radius:3px;padding:1px 6px}")
                .append(".better{background:#d3f9d8;color:#2b8a3e}.worse{background:#ffe3e3;color:#c92a2a}")
                .append(".nodiff{background:#f1f3f5;color:#495057}.nodata{background:#fff3bf;color:#8f6b00}")
                .append(".warn{color:#c92a2a}.note{color:#555;font-size:13px}.charts{display:flex;flex-wrap:wrap;gap:12px}")
                .append("svg text{font-family:system-ui,sans-serif}.sw{display:inline-block;width:12px;height:12px;")
                .append("vertical-align:middle;margin-right:4px;border-radius:2px}</style></head><body>");
        h.append("<h1>ccagent canary report</h1>");
        long read = r.inputs().stream().filter(i -> i.duplicateOf == null && i.problem == null).count();
        h.append("<p>").append(read).append(" recording").append(read == 1 ? "" : "s").append(" read, ")
                .append(r.connections()).append(" connections in ").append(r.arms().size()).append(" arms");
        if (r.baseline() != null) {
            h.append("; baseline arm <b>").append(esc(r.baseline().name)).append("</b>");
        }
        h.append(".</p>");
        h.append("<p>Time span judged: ").append(esc(r.span()))
                .append(" <span class=\"note\">(the first and last ccagent event written in the recordings read)</span></p>");
        verdicts(h, r);
        inputs(h, r);
        if (!r.arms().isEmpty()) {
            legend(h, r);
            armTable(h, r);
            h.append("<h2>Distributions over connections (CDF)</h2><div class=\"charts\">");
            List<Curve> g = new ArrayList<>();
            List<Curve> gss = new ArrayList<>();
            List<Curve> rtt = new ArrayList<>();
            List<Curve> loss = new ArrayList<>();
            for (FleetReport.Arm a : r.arms().values()) {
                String c = color(r, a);
                g.add(new Curve(a.name, c, scale(a.goodput, 1e-6)));
                gss.add(new Curve(a.name, c, scale(a.goodputLeftSlowStart, 1e-6)));
                rtt.add(new Curve(a.name, c, a.rttP50Millis));
                loss.add(new Curve(a.name, c, scale(a.lossRate, 100)));
            }
            h.append(cdf("Goodput per connection (all)", "Mbit/s, log scale", g, true));
            h.append(cdf("Goodput per connection (left slow start)", "Mbit/s, log scale", gss, true));
            h.append(cdf("RTT p50 per connection", "ms", rtt, false));
            h.append(cdf("Loss rate per connection", "% of bytes sent", loss, false));
            h.append("</div>");
            boolean anySeries = r.arms().values().stream().anyMatch(a -> !a.cwnd.bins.isEmpty());
            if (anySeries) {
                h.append("<h2>Over connection lifetime: median and p10&ndash;p90 band per arm</h2>")
                        .append("<p class=\"note\">From CongestionState samples, by time since each connection's first "
                                + "sample; the band holds 80% of the arm's samples in each interval; intervals with fewer than "
                                + "10 samples (or 2% of the fullest) are left out.</p><div class=\"charts\">");
                h.append(series(r, "Congestion window", "KiB", a -> a.cwnd, 1 / 1024.0));
                h.append(series(r, "Smoothed RTT", "ms", a -> a.srtt, 1e-6));
                h.append(series(r, "Pacing rate", "Mbit/s", a -> a.pacing, 8e-6));
                h.append("</div>");
            }
            stallsAndAlarms(h, r);
        }
        fallbacks(h, r); // also without connections: a fallback may be why there are none
        moduleVerdicts(h, r); // so may a skipped library
        h.append("</body></html>\n");
        return h.toString();
    }

    // ---- sections

    private static void verdicts(StringBuilder h, FleetReport r) {
        h.append("<h2>Verdicts</h2>");
        if (r.baseline() == null) {
            h.append("<p class=\"warn\">No comparison: ").append(esc(String.valueOf(r.baselineProblem()))).append("</p>");
            return;
        }
        if (r.comparisons().isEmpty()) {
            h.append("<p>Only the baseline arm is present: nothing to compare.</p>");
            return;
        }
        h.append("<table><tr><th class=\"l\">arm</th><th class=\"l\">metric</th><th class=\"l\">verdict</th>")
                .append("<th>ratio of medians [95% CI]</th><th class=\"l\">CI vs 1 (&frac14;&ndash;4, log)</th>")
                .append("<th title=\"Mann&ndash;Whitney U, two-sided\">p&nbsp;(M&#8209;W)</th><th>medians: arm vs baseline</th>")
                .append("<th class=\"l\">note</th></tr>");
        for (FleetReport.ArmComparison ac : r.comparisons()) {
            for (Comparison c : ac.metrics) {
                String cls = c.verdict == Comparison.Verdict.BETTER ? "better" : c.verdict == Comparison.Verdict.WORSE
                        ? "worse" : c.verdict == Comparison.Verdict.NOT_ENOUGH_DATA ? "nodata" : "nodiff";
                h.append("<tr><td class=\"l\">").append(esc(ac.arm.name)).append("</td><td class=\"l ww\">")
                        .append(esc(FleetOutput.label(c.metric))).append(c.higherIsBetter ? " &uarr;" : " &darr;")
                        .append("</td><td class=\"l\"><span class=\"v ").append(cls).append("\">")
                        .append(esc(c.verdict.text)).append("</span></td><td>")
                        .append(c.interval == null ? "-" : FleetOutput.num(c.interval.estimate()) + " ["
                                + FleetOutput.num(c.interval.low()) + " &ndash; " + FleetOutput.num(c.interval.high()) + "]")
                        .append("</td><td class=\"l\">").append(ciBar(c)).append("</td><td>")
                        .append(FleetOutput.p(c.test.p)).append("</td><td class=\"ww\">")
                        // a figure stays on one line with its unit; the cell wraps at "vs"
                        .append(esc(FleetOutput.value(c.metric, c.medianArm)).replace(" ", "&nbsp;")).append(" vs ")
                        .append(esc(FleetOutput.value(c.metric, c.medianBaseline)).replace(" ", "&nbsp;"))
                        .append("</td><td class=\"l note w\">n ").append(c.nArm).append(" / ").append(c.nBaseline);
                String note = FleetOutput.dataNote(c);
                h.append(note.isEmpty() ? "" : "; " + esc(note)).append("</td></tr>");
            }
        }
        h.append("</table>");
        h.append(String.format(Locale.ROOT, "<p class=\"note\">&uarr; higher is better, &darr; lower is better. "
                        + "&ldquo;better&rdquo;/&ldquo;worse&rdquo; need p &lt; %.2g (0.05 over %d tests, Bonferroni) and a 95%% "
                        + "bootstrap interval (%d resamples, seed %d) on one side of 1; fewer than %d connections in an arm "
                        + "is &ldquo;not enough data&rdquo;.</p>", r.alphaPerTest(),
                r.comparisons().size() * FleetReport.METRICS.size(), r.options().resamples, r.options().seed,
                Comparison.MIN_PER_ARM));
    }

    /** A small forest-plot cell: the CI as a bar against a line at 1, log scale from 1/4 to 4. */
    private static String ciBar(Comparison c) {
        int w = 140;
        int hgt = 16;
        StringBuilder s = new StringBuilder("<svg width=\"" + w + "\" height=\"" + hgt + "\" role=\"img\">");
        DoubleUnaryOperator x = v -> {
            double lv = Math.log(Math.max(0.25, Math.min(4, v))) / Math.log(4);
            return w / 2.0 + lv * (w / 2.0 - 4);
        };
        s.append("<line x1=\"4\" y1=\"8\" x2=\"").append(w - 4).append("\" y2=\"8\" stroke=\"#dee2e6\"/>");
        for (double t : new double[] {0.25, 0.5, 2, 4}) {
            s.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"5\" x2=\"%.1f\" y2=\"11\" stroke=\"#ced4da\"/>",
                    x.applyAsDouble(t), x.applyAsDouble(t)));
        }
        s.append("<line x1=\"").append(w / 2).append("\" y1=\"0\" x2=\"").append(w / 2).append("\" y2=\"").append(hgt)
                .append("\" stroke=\"#495057\" stroke-width=\"1.5\"/>");
        if (c.interval != null && !Double.isNaN(c.interval.low()) && !Double.isNaN(c.interval.high())) {
            String color = c.verdict == Comparison.Verdict.BETTER ? "#2b8a3e" : c.verdict == Comparison.Verdict.WORSE
                    ? "#c92a2a" : "#495057";
            double x1 = x.applyAsDouble(c.interval.low());
            double x2 = x.applyAsDouble(c.interval.high());
            s.append(String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"5\" width=\"%.1f\" height=\"6\" fill=\"%s\" "
                    + "opacity=\"0.45\"/>", x1, Math.max(1.5, x2 - x1), color));
            if (!Double.isNaN(c.interval.estimate())) {
                s.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"8\" r=\"3.5\" fill=\"%s\"/>",
                        x.applyAsDouble(c.interval.estimate()), color));
            }
        }
        return s.append("</svg>").toString();
    }

    private static void inputs(StringBuilder h, FleetReport r) {
        List<String> lines = new ArrayList<>();
        for (FleetReport.Input in : r.inputs()) {
            if (in.duplicateOf != null) {
                lines.add(esc(in.path.toString()) + ": the same recording as " + esc(in.duplicateOf.toString())
                        + " &mdash; counted once");
            } else if (in.problem != null) {
                lines.add("<span class=\"warn\">" + esc(in.path.toString()) + ": " + esc(in.problem) + "</span>");
            }
            if (!in.missingFields.isEmpty()) {
                lines.add(esc(in.path.toString()) + ": ConnectionSummary lacks " + esc(String.join(", ", in.missingFields))
                        + " (another agent version)");
            }
        }
        if (r.duplicateSummaries() > 0) {
            lines.add(r.duplicateSummaries() + " connection summaries appeared in more than one recording: counted once");
        }
        h.append("<details").append(lines.isEmpty() ? "" : " open").append("><summary>Inputs: ")
                .append(r.inputs().size()).append(" file").append(r.inputs().size() == 1 ? "" : "s")
                .append(lines.isEmpty() ? ", all read whole" : ", " + lines.size() + " note" + (lines.size() == 1 ? "" : "s"))
                .append("</summary><ul>");
        for (String l : lines) {
            h.append("<li>").append(l).append("</li>");
        }
        int shown = 0;
        for (FleetReport.Input in : r.inputs()) {
            if (in.duplicateOf == null && in.problem == null && shown++ < 50) {
                h.append("<li class=\"note\">").append(esc(in.path.toString())).append(": ").append(in.events)
                        .append(" events, ").append(in.summaries).append(" connection summaries</li>");
            }
        }
        if (shown > 50) {
            h.append("<li class=\"note\">&hellip; and ").append(shown - 50).append(" more</li>");
        }
        h.append("</ul></details>");
    }

    private static void legend(StringBuilder h, FleetReport r) {
        h.append("<p>");
        for (FleetReport.Arm a : r.arms().values()) {
            h.append("<span style=\"margin-right:1.5em\"><span class=\"sw\" style=\"background:")
                    .append(color(r, a)).append("\"></span>").append(esc(a.name))
                    .append(a == r.baseline() ? " (baseline)" : "").append("</span>");
        }
        h.append("</p>");
    }

    private static void armTable(StringBuilder h, FleetReport r) {
        h.append("<h2>Per arm</h2><table><tr><th class=\"l\">arm</th><th>connections</th><th class=\"l\">controllers</th>")
                .append("<th>goodput p10 / p50 / p90</th><th>p50 left SS (n)</th>")
                .append("<th>RTT p50 / p95</th><th>loss rate</th><th>acknowledged</th><th class=\"l\">alarms</th></tr>");
        for (FleetReport.Arm a : r.arms().values()) {
            StringBuilder ctl = new StringBuilder();
            a.controllers.forEach((k, v) -> ctl.append(ctl.length() > 0 ? ", " : "").append(k).append(' ').append(v));
            h.append("<tr><td class=\"l\">").append(esc(a.name)).append(a == r.baseline() ? " (baseline)" : "")
                    .append("</td><td>").append(a.connections).append("</td><td class=\"l ww\">").append(esc(ctl.toString()))
                    .append("</td><td>").append(FleetOutput.rate(Quantiles.ofSorted(a.goodput, 0.1))).append(" / ")
                    .append(FleetOutput.rate(Quantiles.ofSorted(a.goodput, 0.5))).append(" / ")
                    .append(FleetOutput.rate(Quantiles.ofSorted(a.goodput, 0.9)))
                    .append("</td><td>").append(FleetOutput.rate(Quantiles.ofSorted(a.goodputLeftSlowStart, 0.5)))
                    .append(" (").append(a.goodputLeftSlowStart.length).append(")</td><td>")
                    .append(FleetOutput.ms(Quantiles.ofSorted(a.rttP50Millis, 0.5))).append(" / ")
                    .append(FleetOutput.ms(Quantiles.ofSorted(a.rttP95Millis, 0.5))).append("</td><td>")
                    .append(FleetOutput.pct(a.aggregateLossRate())).append("</td><td>")
                    .append(esc(RecordingReport.bytes((long) a.bytesAcked))).append("</td><td class=\"l ww\">")
                    .append(esc(a.alarms.isEmpty() ? "none" : a.alarms.toString())).append("</td></tr>");
        }
        h.append("</table><p class=\"note\">RTT p50/p95: median over connections of each connection's p50/p95. "
                + "Loss rate: bytes lost over bytes sent, whole arm.</p>");
    }

    private static void stallsAndAlarms(StringBuilder h, FleetReport r) {
        h.append("<h2>Pacing stalls (information)</h2><p class=\"note\">A PacingStall is the pacer holding the sender "
                + "longer than it announced. It is normal in small numbers; stalls longer than the connection's median RTT "
                + "(factor ").append(FleetReport.STALL_RTT_FACTOR).append(") are the ones worth a look.</p>")
                .append("<table><tr><th class=\"l\">arm</th><th>stalls</th><th>connections with stalls</th>")
                .append("<th>stalls &gt; 1 RTT</th><th>connections with stalls &gt; 1 RTT</th></tr>");
        for (FleetReport.Arm a : r.arms().values()) {
            h.append("<tr><td class=\"l\">").append(esc(a.name)).append("</td><td>").append(a.pacingStalls)
                    .append("</td><td>").append(a.connectionsWithStalls).append(" of ").append(a.connections)
                    .append("</td><td>").append(a.stallsLongerThanRtt).append("</td><td>")
                    .append(a.connectionsWithLongStalls).append("</td></tr>");
        }
        h.append("</table>");
        if (!r.loopAllocationStorms().isEmpty()) {
            h.append("<h2>Event-loop allocation storms</h2><p class=\"note\">A shared event loop allocated at the storm"
                    + " rate (SendPathAllocation, path event loop). The loop serves other work too; no connection and no"
                    + " arm is blamed.</p><table><tr><th class=\"l\">loop</th><th>windows flagged</th><th>up to</th>")
                    .append("<th class=\"l\">first</th><th class=\"l\">last</th></tr>");
            for (FleetReport.LoopAllocationStorm s : r.loopAllocationStorms()) {
                h.append("<tr><td class=\"l\">").append(esc(s.library + " " + s.thread)).append("</td><td>").append(s.windows)
                        .append("</td><td>").append(s.maxRate >> 20).append(" MB/s</td><td class=\"l\">")
                        .append(esc(ms(s.first))).append("</td><td class=\"l\">").append(esc(ms(s.last))).append("</td></tr>");
            }
            h.append("</table>");
        }
        if (!r.loopSpins().isEmpty()) {
            h.append("<h2>Event-loop spins</h2><p class=\"note\">A shared event loop burned CPU while its QUIC connections waited:"
                    + " blocked in one call (their tasks a second late or more) or polling without work (its poll"
                    + " returning at once, its tasks still on time). No connection and no arm is blamed.</p>")
                    .append("<table><tr><th class=\"l\">since</th><th class=\"l\">loop</th><th class=\"l\">how</th>")
                    .append("<th>seconds</th><th>CPU</th><th>tasks late</th><th>QUIC connections</th>")
                    .append("<th class=\"l\">innermost frame</th><th class=\"l\">ended</th></tr>");
            for (FleetReport.LoopSpin s : r.loopSpins()) {
                h.append("<tr><td class=\"l\">").append(esc(ms(s.since()))).append("</td><td class=\"l\">")
                        .append(esc(s.library() + " " + s.thread())).append("</td><td class=\"l\">")
                        .append(esc("polling".equals(s.kind()) ? "polling without work" : "blocked")).append("</td><td>")
                        .append(String.format(Locale.ROOT, "%.1f", s.seconds())).append("</td><td>")
                        .append(String.format(Locale.ROOT, "%.0f%%", 100 * s.cpuShare())).append("</td><td>")
                        .append(String.format(Locale.ROOT, "%.3f s", s.taskDelayNanos() / 1e9)).append("</td><td title=\"")
                        .append(esc(s.connectionIds())).append("\">").append(s.connections()).append("</td><td class=\"l wl\">")
                        .append(esc(s.topFrame())).append("</td><td class=\"l\">").append(esc(s.endedBy())).append("</td></tr>");
            }
            h.append("</table>");
        }
        if (!r.rollbacks().isEmpty()) {
            h.append("<h2>Guard rollbacks</h2><ul>");
            for (FleetReport.Rollback rb : r.rollbacks()) {
                h.append("<li>").append(esc(rb.time().toString())).append(": ").append(esc(rb.arm())).append(" (")
                        .append(esc(rb.metric())).append(") ").append(esc(rb.evidence())).append("</li>");
            }
            h.append("</ul>");
        }
    }

    /** An instant to the millisecond, as the page shows times. */
    private static String ms(java.time.Instant t) {
        return t.truncatedTo(java.time.temporal.ChronoUnit.MILLIS).toString();
    }

    private static void fallbacks(StringBuilder h, FleetReport r) {
        if (!r.fallbacks().isEmpty()) {
            h.append("<h2>Fallbacks</h2><p>A part of the agent failed (its code threw) or was refused (a swap that the"
                    + " library's version, the guard or the library's read-back config did not take), and the connections"
                    + " went on without that part of the agent (the <code>fallback</code> log lines and"
                    + " <code>status</code> say the same).</p>")
                    .append("<table><tr><th>fallbacks</th><th class=\"l\">where</th><th class=\"l\">exception</th>")
                    .append("<th class=\"l\">first</th><th class=\"l\">last</th><th class=\"l\">the connections then</th></tr>");
            for (FleetReport.FallbackCause f : r.fallbacks()) {
                h.append("<tr><td>").append(f.count).append("</td><td class=\"l\">").append(esc(f.where))
                        .append("</td><td class=\"l\">").append(esc(f.exception)).append("</td><td class=\"l\">")
                        .append(esc(ms(f.first))).append("</td><td class=\"l\">").append(esc(ms(f.last)))
                        .append("</td><td class=\"l wl\">").append(esc(String.valueOf(f.consequence))).append("</td></tr>");
            }
            h.append("</table>");
        }
    }

    private static void moduleVerdicts(StringBuilder h, FleetReport r) {
        List<FleetReport.ModuleVerdicts> modules = r.moduleVerdicts();
        if (modules.isEmpty()) {
            return;
        }
        h.append("<h2>Module verdicts</h2><p>Each target module's verdict for each class loader that holds its library,"
                        + " from the <code>ModuleVerdict</code> events (the same as the module's log line and"
                        + " <code>status</code>), once however often the recordings repeat it.</p>")
                .append("<table><tr><th class=\"l\">module</th><th class=\"l\">version</th><th>applied in</th>")
                .append("<th>skipped in</th><th class=\"l\">skipped class loaders and why</th></tr>");
        for (FleetReport.ModuleVerdicts m : modules) {
            StringBuilder why = new StringBuilder();
            m.skippedLoaders.forEach((reason, loaders) -> why.append(why.length() > 0 ? "<br>" : "")
                    .append(esc(String.join(", ", loaders))).append(": ").append(esc(reason)));
            h.append("<tr><td class=\"l\">").append(esc(m.module)).append("</td><td class=\"l\">")
                    .append(esc(m.version.isEmpty() ? "unknown" : m.version)).append("</td><td>").append(m.appliedLoaders)
                    .append("</td><td>").append(m.skipped()).append("</td><td class=\"l wl\">")
                    .append(m.skipped() == 0 ? "none" : why).append("</td></tr>");
        }
        h.append("</table>");
    }

    // ---- charts

    static final class Curve {
        final String name;
        final String color;
        final double[] sorted;

        Curve(String name, String color, double[] sorted) {
            this.name = name;
            this.color = color;
            this.sorted = sorted;
        }
    }

    private static double[] scale(double[] v, double f) {
        double[] out = new double[v.length];
        for (int i = 0; i < v.length; i++) {
            out[i] = v[i] * f;
        }
        return out;
    }

    static String cdf(String title, String unit, List<Curve> curves, boolean log) {
        double min = Double.POSITIVE_INFINITY;
        double max = Double.NEGATIVE_INFINITY;
        for (Curve c : curves) {
            for (double v : c.sorted) {
                if (log && v <= 0) {
                    continue;
                }
                min = Math.min(min, v);
                max = Math.max(max, v);
            }
        }
        StringBuilder s = frame(title);
        if (min > max) {
            return s.append(noData()).append("</svg>").toString();
        }
        if (!log) {
            min = Math.min(0, min);
        }
        Axis xa = log ? Axis.log(min, max) : Axis.linear(min, max);
        Axis ya = Axis.linear(0, 1);
        axes(s, xa, ya, unit, "share of connections");
        for (Curve c : curves) {
            int n = c.sorted.length;
            if (n == 0) {
                continue;
            }
            StringBuilder pts = new StringBuilder();
            int steps = Math.min(n, CDF_POINTS);
            double prevY = 0;
            for (int k = 0; k < steps; k++) {
                int idx = steps == n ? k : (int) Math.round((double) k * (n - 1) / (steps - 1));
                double v = c.sorted[idx];
                if (log && v <= 0) {
                    continue;
                }
                double y = (idx + 1.0) / n;
                double px = xa.px(v);
                pts.append(String.format(Locale.ROOT, "%.1f,%.1f %.1f,%.1f ", px, ya.py(prevY), px, ya.py(y)));
                prevY = y;
            }
            s.append("<polyline fill=\"none\" stroke-width=\"2\" stroke=\"").append(c.color).append("\" points=\"")
                    .append(pts).append("\"><title>").append(esc(c.name)).append(" (n=").append(n)
                    .append(")</title></polyline>");
        }
        return s.append("</svg>").toString();
    }

    interface SeriesOf {
        TimeSeries of(FleetReport.Arm a);
    }

    /**
     * Samples a bin needs to be drawn: 10, or 2% of the arm's fullest bin. The few connections that outlive
     * the rest would otherwise end every chart in a fringe of noise.
     */
    static long minSamples(TimeSeries s) {
        long max = 0;
        for (LogHistogram h : s.bins) {
            max = Math.max(max, h.total());
        }
        return Math.max(10, max / 50);
    }

    static String series(FleetReport r, String title, String unit, SeriesOf which, double factor) {
        double maxX = 0;
        double maxY = 0;
        for (FleetReport.Arm a : r.arms().values()) {
            TimeSeries s = which.of(a);
            long min = minSamples(s);
            for (int b = 0; b < s.bins.size(); b++) {
                LogHistogram hist = s.bins.get(b);
                if (hist.total() >= min) {
                    maxX = Math.max(maxX, (b + 1) * s.binNanos / 1e9);
                    maxY = Math.max(maxY, hist.quantile(0.9) * factor);
                }
            }
        }
        StringBuilder svg = frame(title);
        if (maxX == 0) {
            return svg.append(noData()).append("</svg>").toString();
        }
        Axis xa = Axis.linear(0, maxX);
        Axis ya = Axis.linear(0, maxY);
        axes(svg, xa, ya, "seconds since connection start", unit);
        for (FleetReport.Arm a : r.arms().values()) {
            String color = color(r, a);
            TimeSeries s = which.of(a);
            StringBuilder upper = new StringBuilder();
            List<String> lower = new ArrayList<>();
            StringBuilder median = new StringBuilder();
            long min = minSamples(s);
            for (int b = 0; b < s.bins.size(); b++) {
                LogHistogram hist = s.bins.get(b);
                if (hist.total() < min) {
                    continue;
                }
                double px = xa.px((b + 0.5) * s.binNanos / 1e9);
                upper.append(String.format(Locale.ROOT, "%.1f,%.1f ", px, ya.py(hist.quantile(0.9) * factor)));
                lower.add(0, String.format(Locale.ROOT, "%.1f,%.1f ", px, ya.py(hist.quantile(0.1) * factor)));
                median.append(String.format(Locale.ROOT, "%.1f,%.1f ", px, ya.py(hist.quantile(0.5) * factor)));
            }
            if (median.length() == 0) {
                continue;
            }
            svg.append("<polygon fill=\"").append(color).append("\" fill-opacity=\"0.18\" stroke=\"none\" points=\"")
                    .append(upper).append(String.join("", lower)).append("\"/>");
            svg.append("<polyline fill=\"none\" stroke-width=\"2\" stroke=\"").append(color).append("\" points=\"")
                    .append(median).append("\"><title>").append(esc(a.name)).append(" median</title></polyline>");
        }
        return svg.append("</svg>").toString();
    }

    private static StringBuilder frame(String title) {
        StringBuilder s = new StringBuilder();
        s.append("<svg width=\"").append(W).append("\" height=\"").append(H).append("\" viewBox=\"0 0 ").append(W)
                .append(' ').append(H).append("\" role=\"img\" style=\"border:1px solid #e9ecef;background:#fff\">")
                .append("<text x=\"").append(W / 2).append("\" y=\"18\" text-anchor=\"middle\" font-size=\"14\" ")
                .append("font-weight=\"600\">").append(esc(title)).append("</text>");
        return s;
    }

    private static String noData() {
        return "<text x=\"" + W / 2 + "\" y=\"" + H / 2 + "\" text-anchor=\"middle\" fill=\"#888\">no data</text>";
    }

    private static void axes(StringBuilder s, Axis xa, Axis ya, String xLabel, String yLabel) {
        int x0 = ML;
        int y0 = H - MB;
        s.append("<g font-size=\"11\" fill=\"#444\">");
        for (double t : xa.ticks()) {
            double px = xa.px(t);
            s.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#eee\"/>", px, MT,
                    px, y0));
            s.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>", px, y0 + 14,
                    tick(t)));
        }
        for (double t : ya.ticks()) {
            double py = ya.py(t);
            s.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/>", x0, py,
                    W - MR, py));
            s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>", x0 - 5, py + 4,
                    tick(t)));
        }
        s.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#444\"/>", x0, y0,
                W - MR, y0));
        s.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#444\"/>", x0, MT, x0,
                y0));
        s.append("<text x=\"").append((x0 + W - MR) / 2).append("\" y=\"").append(H - 8)
                .append("\" text-anchor=\"middle\">").append(esc(xLabel)).append("</text>");
        s.append("<text transform=\"translate(14,").append((MT + y0) / 2).append(") rotate(-90)\" text-anchor=\"middle\">")
                .append(esc(yLabel)).append("</text></g>");
    }

    private static String tick(double t) {
        if (t == Math.rint(t) && Math.abs(t) < 1e6) {
            return Long.toString((long) t);
        }
        double a = Math.abs(t);
        if (a >= 0.1) {
            return String.format(Locale.ROOT, "%.1f", t).replaceAll("\\.0$", "");
        }
        return String.format(Locale.ROOT, "%.2g", t);
    }

    /** A linear or logarithmic axis mapping data values from {@code lo} to {@code hi} to pixels. */
    record Axis(boolean log, double lo, double hi) {

        static Axis linear(double lo, double hi) {
            if (hi <= lo) {
                hi = lo + (lo == 0 ? 1 : Math.abs(lo) * 0.1);
            }
            double step = niceStep((hi - lo) / 5);
            return new Axis(false, Math.floor(lo / step) * step, Math.ceil(hi / step) * step);
        }

        static Axis log(double lo, double hi) {
            double l = Math.pow(10, Math.floor(Math.log10(lo)));
            double h = Math.pow(10, Math.ceil(Math.log10(hi)));
            if (h <= l) {
                h = l * 10;
            }
            return new Axis(true, l, h);
        }

        double frac(double v) {
            if (log) {
                return (Math.log10(Math.max(v, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo));
            }
            return (v - lo) / (hi - lo);
        }

        double px(double v) {
            return ML + frac(v) * (W - ML - MR);
        }

        double py(double v) {
            return (H - MB) - frac(v) * (H - MB - MT);
        }

        List<Double> ticks() {
            List<Double> t = new ArrayList<>();
            if (log) {
                for (double v = lo; v <= hi * 1.0001; v *= 10) {
                    t.add(v);
                }
            } else {
                double step = niceStep((hi - lo) / 5);
                for (double v = lo; v <= hi + step * 1e-6; v += step) {
                    t.add(Math.abs(v) < step * 1e-9 ? 0 : v);
                }
            }
            return t;
        }

        static double niceStep(double raw) {
            double p = Math.pow(10, Math.floor(Math.log10(raw)));
            double m = raw / p;
            return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
        }
    }

    static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
