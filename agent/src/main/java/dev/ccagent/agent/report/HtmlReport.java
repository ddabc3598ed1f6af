package dev.ccagent.agent.report;

import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.data.category.DefaultCategoryDataset;
import org.jfree.data.time.Millisecond;
import org.jfree.data.time.TimeSeries;
import org.jfree.data.time.TimeSeriesCollection;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * A self-contained HTML page for a {@link RecordingReport}: the per-arm table and charts drawn
 * with JFreeChart (goodput per arm; congestion window, pacing rate and RTT over time per
 * connection), embedded as PNG data URIs so the page is one file.
 */
public final class HtmlReport {

    /** Connections charted at most (the table covers all). */
    static final int MAX_CONNECTIONS_CHARTED = 12;

    private HtmlReport() {
    }

    public static void write(RecordingReport report, Path out) throws IOException {
        System.setProperty("java.awt.headless", "true");
        StringBuilder html = new StringBuilder();
        html.append("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>ccagent report</title><style>")
                .append("body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}")
                .append("td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}th{background:#eee}")
                .append("td:first-child{text-align:left}.warn{color:#b00}</style></head><body>");
        html.append("<h1>ccagent recording report</h1><p>").append(escape(report.file().toString())).append(": ")
                .append(report.events()).append(" events, ").append(report.connections().size())
                .append(" connections</p>");
        if (report.problem() != null) {
            html.append("<p class=\"warn\">").append(escape(report.problem())).append("</p>");
        }
        Map<String, RecordingReport.ArmSummary> arms = report.arms();
        html.append("<h2>Per arm</h2><table><tr><th>arm</th><th>connections</th><th>goodput (mean)</th>")
                .append("<th>acknowledged</th><th>RTT p50</th><th>RTT p95</th><th>packets lost</th>")
                .append("<th>modes</th><th>alarms</th></tr>");
        DefaultCategoryDataset goodput = new DefaultCategoryDataset();
        for (RecordingReport.ArmSummary a : arms.values()) {
            html.append("<tr><td>").append(escape(a.arm)).append("</td><td>").append(a.connections)
                    .append("</td><td>").append(RecordingReport.rate(a.meanGoodputBitsPerSecond)).append("</td><td>")
                    .append(RecordingReport.bytes(a.bytesAcked)).append("</td><td>")
                    .append(String.format(Locale.ROOT, "%.1f ms", a.rttP50Millis)).append("</td><td>")
                    .append(String.format(Locale.ROOT, "%.1f ms", a.rttP95Millis)).append("</td><td>")
                    .append(a.packetsLost).append("</td><td>").append(escape(modes(a))).append("</td><td>")
                    .append(escape(a.alarms.isEmpty() ? "none" : a.alarms.toString())).append("</td></tr>");
            goodput.addValue(a.meanGoodputBitsPerSecond / 1e6, "goodput", a.arm);
        }
        html.append("</table>");
        if (!arms.isEmpty()) {
            JFreeChart bar = ChartFactory.createBarChart("Mean goodput per connection", "arm", "Mbit/s", goodput,
                    PlotOrientation.VERTICAL, false, false, false);
            html.append(image(bar, 700, 350));
        }
        List<RecordingReport.Connection> connections = report.connections();
        connections.removeIf(c -> c.samples().size() < 2);
        if (!connections.isEmpty()) {
            html.append("<h2>Over time</h2>");
            List<RecordingReport.Connection> charted = connections.subList(0,
                    Math.min(MAX_CONNECTIONS_CHARTED, connections.size()));
            html.append(image(timeChart("Congestion window", "KiB", charted, s -> s.congestionWindow / 1024.0), 900, 400));
            html.append(image(timeChart("Pacing rate", "Mbit/s", charted, s -> s.pacingRate * 8 / 1e6), 900, 400));
            html.append(image(timeChart("Smoothed RTT", "ms", charted, s -> s.smoothedRttNanos / 1e6), 900, 400));
            if (connections.size() > charted.size()) {
                html.append("<p>").append(charted.size()).append(" of ").append(connections.size())
                        .append(" connections charted.</p>");
            }
        }
        html.append("</body></html>");
        Files.writeString(out, html, StandardCharsets.UTF_8);
    }

    private static JFreeChart timeChart(String title, String unit, List<RecordingReport.Connection> connections,
                                        ToDoubleFunction<RecordingReport.Sample> value) {
        TimeSeriesCollection data = new TimeSeriesCollection();
        for (RecordingReport.Connection c : connections) {
            TimeSeries series = new TimeSeries(c.arm() + " " + c.algorithm() + " " + shortId(c.id));
            for (RecordingReport.Sample s : c.samples()) {
                series.addOrUpdate(new Millisecond(Date.from(s.time)), value.applyAsDouble(s));
            }
            data.addSeries(series);
        }
        return ChartFactory.createTimeSeriesChart(title, "time", unit, data, true, false, false);
    }

    private static String image(JFreeChart chart, int width, int height) throws IOException {
        ByteArrayOutputStream png = new ByteArrayOutputStream();
        ChartUtils.writeChartAsPNG(png, chart, width, height);
        return "<p><img alt=\"" + escape(chart.getTitle().getText()) + "\" src=\"data:image/png;base64,"
                + Base64.getEncoder().encodeToString(png.toByteArray()) + "\"></p>";
    }

    private static String modes(RecordingReport.ArmSummary a) {
        StringBuilder sb = new StringBuilder();
        a.secondsInMode.forEach((m, s) -> sb.append(m).append(' ').append(String.format(Locale.ROOT, "%.1fs", s))
                .append("; "));
        return sb.length() > 0 ? sb.substring(0, sb.length() - 2) : "-";
    }

    private static String shortId(String id) {
        return id.length() > 8 ? id.substring(0, 8) : id;
    }

    static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
