package dev.ccagent.sim;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.Locale;

/** The simulator's JSON output, written by hand (the simulator depends only on cc-impl and link-model). */
final class Json {

    private Json() {
    }

    static String result(SimulationResult r) {
        StringBuilder sb = new StringBuilder("{\"flows\":[");
        for (int i = 0; i < r.flows().size(); i++) {
            SimulationResult.FlowResult f = r.flow(i);
            sb.append(i == 0 ? "" : ",").append('{');
            field(sb, "cc", quote(f.algorithm));
            field(sb, "bytes", Long.toString(f.bytesDelivered));
            field(sb, "completionSeconds", f.completed() ? num(f.completionSeconds()) : "null");
            field(sb, "goodputBps", num(f.goodputBps()));
            field(sb, "packetsSent", Long.toString(f.packetsSent));
            field(sb, "packetsLost", Long.toString(f.packetsLost));
            field(sb, "lossRate", num(f.lossRate()));
            field(sb, "srttMs", f.minRttNanos > 0 ? num(f.smoothedRttNanos / 1e6) : "null");
            field(sb, "minRttMs", f.minRttNanos > 0 ? num(f.minRttNanos / 1e6) : "null");
            field(sb, "bandwidthEstimateBps",
                    f.finalState.bandwidthEstimate > 0 ? num(f.finalState.bandwidthEstimate * 8.0) : "null");
            field(sb, "finalState", quote(f.finalState.mode.label()));
            field(sb, "startupExitSeconds",
                    f.startupExitNanos >= 0 ? num((f.startupExitNanos - f.startNanos) / 1e9) : "null");
            field(sb, "queueDelayP50Ms", num(f.queueDelayPercentile(50) / 1e6));
            field(sb, "queueDelayP95Ms", num(f.queueDelayPercentile(95) / 1e6));
            sb.setLength(sb.length() - 1);
            sb.append('}');
        }
        sb.append("],");
        field(sb, "linkUtilization", num(r.linkUtilization()));
        Double jain = r.jainFairness();
        field(sb, "jainFairness", jain == null ? "null" : num(jain));
        sb.setLength(sb.length() - 1);
        return sb.append('}').toString();
    }

    private static void field(StringBuilder sb, String name, String value) {
        sb.append('"').append(name).append("\":").append(value).append(',');
    }

    static String num(double v) {
        if (Double.isNaN(v) || Double.isInfinite(v)) {
            return "null";
        }
        return new BigDecimal(v).round(new MathContext(9)).stripTrailingZeros().toPlainString();
    }

    static String quote(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                sb.append('\\').append(c);
            } else if (c < 0x20) {
                sb.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
            } else {
                sb.append(c);
            }
        }
        return sb.append('"').toString();
    }
}
