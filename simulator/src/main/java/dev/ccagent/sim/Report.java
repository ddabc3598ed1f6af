package dev.ccagent.sim;

import dev.ccagent.cc.Units;

import java.util.List;
import java.util.Locale;

/** Human-readable tables for the CLI. */
final class Report {

    private Report() {
    }

    static String header(SimulatorCli.Options o) {
        return String.format(Locale.ROOT, "link: %s, RTT %s, buffer %s, loss %.2f%%, mss %d, seed %d%s%n",
                Units.formatBitRate(o.rate), Units.formatNanos(o.rtt),
                o.bufferBytes > 0 ? o.bufferBytes + " B" : trimDouble(o.bufferBdp) + " BDP",
                o.loss * 100, o.mss, o.seed,
                o.bytes > 0 ? ", " + o.bytes + " bytes per flow" : ", " + Units.formatNanos(o.duration));
    }

    static String table(SimulatorCli.Options o, SimulationResult r) {
        StringBuilder sb = new StringBuilder(header(o));
        sb.append(columns());
        for (SimulationResult.FlowResult f : r.flows()) {
            sb.append(row(f, null));
        }
        sb.append(String.format(Locale.ROOT, "link utilisation %.1f%%", r.linkUtilization() * 100));
        Double jain = r.jainFairness();
        if (jain != null) {
            sb.append(String.format(Locale.ROOT, ", Jain fairness %.3f", jain));
        }
        return sb.append(System.lineSeparator()).toString();
    }

    /** Each algorithm alone on the same link; the ratio column compares goodput with the first. */
    static String compareTable(SimulatorCli.Options o, List<SimulationResult> results) {
        StringBuilder sb = new StringBuilder(header(o));
        sb.append("each algorithm alone on this link, same seed; ratio = goodput / goodput of ")
                .append(results.get(0).flow(0).algorithm).append(System.lineSeparator());
        sb.append(columns());
        double base = results.get(0).flow(0).goodputBps();
        for (SimulationResult r : results) {
            SimulationResult.FlowResult f = r.flow(0);
            sb.append(row(f, base > 0 ? f.goodputBps() / base : null));
        }
        double mathis = o.loss > 0 ? o.mss * 8 / (o.rtt / 1e9) * Math.sqrt(3 / (2 * o.loss)) : 0;
        if (mathis > 0) {
            sb.append(String.format(Locale.ROOT, "loss-based ceiling MSS/RTT*sqrt(3/2p) = %s; link*(1-p) = %s%n",
                    Units.formatBitRate(mathis), Units.formatBitRate(o.rate * (1 - o.loss))));
        }
        return sb.toString();
    }

    private static String columns() {
        return String.format(Locale.ROOT, "%-10s %14s %7s %10s %7s %9s %9s %14s %-16s %9s %9s%n",
                "cc", "goodput", "ratio", "time", "loss", "srtt", "minrtt", "bw estimate", "final state",
                "q p50", "q p95");
    }

    private static String row(SimulationResult.FlowResult f, Double ratio) {
        return String.format(Locale.ROOT, "%-10s %14s %7s %10s %6.2f%% %9s %9s %14s %-16s %9s %9s%n",
                f.algorithm, Units.formatBitRate(f.goodputBps()),
                ratio == null ? "-" : String.format(Locale.ROOT, "%.2fx", ratio),
                (f.completed() ? "" : ">") + String.format(Locale.ROOT, "%.2fs", f.completionSeconds()),
                f.lossRate() * 100, ms(f.smoothedRttNanos), ms(f.minRttNanos),
                f.finalState.bandwidthEstimate > 0 ? Units.formatBitRate(f.finalState.bandwidthEstimate * 8.0) : "-",
                f.finalState.mode.label(), ms(f.queueDelayPercentile(50)), ms(f.queueDelayPercentile(95)));
    }

    private static String ms(long nanos) {
        return String.format(Locale.ROOT, "%.1fms", nanos / 1e6);
    }

    private static String trimDouble(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
    }
}
