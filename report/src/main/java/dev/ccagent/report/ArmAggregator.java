package dev.ccagent.report;

import dev.ccagent.report.stats.Quantiles;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * The arms of a {@link ConnectionModel}: every connection in the arm it was assigned to ("LABEL
 * ALGORITHM", a connection that fell back to the stock controller included: intention to treat), with
 * its per-connection figures sorted for the comparisons, alarm and stall counts, time per mode and the
 * time series.
 */
final class ArmAggregator {

    private ArmAggregator() {
    }

    /** The arms, in name order. */
    static Map<String, FleetReport.Arm> arms(ConnectionModel model) {
        Map<String, List<ConnectionModel.Connection>> byArm = new TreeMap<>();
        for (ConnectionModel.Connection c : model.connections()) {
            byArm.computeIfAbsent(armName(c), k -> new ArrayList<>()).add(c);
        }
        foldFallbacks(byArm);
        Map<String, FleetReport.Arm> arms = new LinkedHashMap<>();
        for (Map.Entry<String, List<ConnectionModel.Connection>> e : byArm.entrySet()) {
            arms.put(e.getKey(), arm(e.getKey(), e.getValue(), model.alarms));
        }
        modesAndSeries(model, arms);
        return arms;
    }

    /**
     * Time per mode: a connection's periodic samples span first..last; each mode gets the share of that
     * span its samples' weights have (one sample: no span, no time; a sample the agent wrote for several
     * periods, beyond its {@code jfr.state-connections}, weighs as many). Modes and time series come from CongestionState,
     * per arm name.
     */
    private static void modesAndSeries(ConnectionModel model, Map<String, FleetReport.Arm> arms) {
        for (ConnectionModel.StateSamples s : model.states.values()) {
            if (s.periodicSamples < 2) {
                continue;
            }
            FleetReport.Arm a = arms.get(ConnectionModel.seriesName(s.arm, s.algorithm));
            if (a == null) {
                continue;
            }
            double span = (s.lastPeriodic - s.firstPeriodic) / 1e9;
            for (int i = 0; i < s.modes.length && s.modes[i] != null; i++) {
                a.secondsInMode.merge(s.modes[i].isEmpty() ? "(stock)" : s.modes[i],
                        span * s.modeWeights[i] / s.periodicWeight, Double::sum);
            }
            a.modeTimedConnections++;
        }
        for (Map.Entry<String, ConnectionModel.ArmSeries> e : model.series.entrySet()) {
            FleetReport.Arm a = arms.get(e.getKey());
            if (a != null) {
                e.getValue().cwnd.copyTo(a.cwnd);
                e.getValue().srtt.copyTo(a.srtt);
                e.getValue().pacing.copyTo(a.pacing);
            }
        }
    }

    /** "LABEL ALGORITHM"; client-side connections (an agent on a client) form arms of their own. */
    static String armName(ConnectionModel.Connection c) {
        return (c.arm.isEmpty() ? "unassigned" : c.arm) + " " + (c.algorithm.isEmpty() ? "?" : c.algorithm)
                + ("client".equals(c.role) ? " (client)" : "");
    }

    /**
     * A connection that fell back to the stock controller stays in the arm it was assigned to (intention to
     * treat): when its label has exactly one arm of connections that did not fall back, it is counted there.
     */
    private static void foldFallbacks(Map<String, List<ConnectionModel.Connection>> byArm) {
        Map<String, List<String>> regularByLabel = new HashMap<>();
        for (Map.Entry<String, List<ConnectionModel.Connection>> e : byArm.entrySet()) {
            if (e.getValue().stream().anyMatch(c -> !isFallback(c))) {
                String label = e.getValue().get(0).arm;
                regularByLabel.computeIfAbsent(label, k -> new ArrayList<>()).add(e.getKey());
            }
        }
        for (String name : new ArrayList<>(byArm.keySet())) {
            List<ConnectionModel.Connection> list = byArm.get(name);
            List<ConnectionModel.Connection> fallbacks = list.stream().filter(ArmAggregator::isFallback)
                    .collect(Collectors.toList());
            if (fallbacks.isEmpty()) {
                continue;
            }
            List<String> targets = regularByLabel.getOrDefault(fallbacks.get(0).arm, List.of());
            if (targets.size() == 1 && !targets.get(0).equals(name)) {
                byArm.get(targets.get(0)).addAll(fallbacks);
                list.removeAll(fallbacks);
                if (list.isEmpty()) {
                    byArm.remove(name);
                }
            }
        }
    }

    private static boolean isFallback(ConnectionModel.Connection c) {
        return c.controller.toLowerCase(Locale.ROOT).startsWith("fallback");
    }

    private static FleetReport.Arm arm(String name, List<ConnectionModel.Connection> conns,
                                       Map<String, ConnectionModel.Alarms> alarms) {
        ConnectionModel.Connection first = conns.get(0);
        FleetReport.Arm a = new FleetReport.Arm(name, first.arm.isEmpty() ? "unassigned" : first.arm,
                first.algorithm.isEmpty() ? "?" : first.algorithm);
        double[] goodput = new double[conns.size()];
        double[] leftSs = new double[conns.size()];
        double[] p50 = new double[conns.size()];
        double[] p95 = new double[conns.size()];
        double[] loss = new double[conns.size()];
        double[] appLimited = new double[conns.size()];
        int i = 0;
        for (ConnectionModel.Connection c : conns) {
            a.connections++;
            if (c.fromStates) {
                a.fromStates++;
                a.controllers.merge("(no summary)", 1, Integer::sum);
            } else {
                a.fromSummaries++;
                a.controllers.merge(c.controller.isEmpty() ? "?" : c.controller, 1, Integer::sum);
            }
            if (c.bytesAcked >= 0) {
                a.bytesAcked += c.bytesAcked;
            }
            if (c.bytesSent >= 0 && c.bytesLost >= 0) {
                a.bytesSent += c.bytesSent;
                a.bytesLost += c.bytesLost;
            }
            goodput[i] = c.goodput();
            leftSs[i] = c.leftSlowStart == 1 ? goodput[i] : Double.NaN;
            p50[i] = c.rttP50 / 1e6;
            p95[i] = c.rttP95 / 1e6;
            loss[i] = c.lossRate();
            appLimited[i] = c.lifetimeNanos > 0 && c.appLimited >= 0 ? Math.min(1, c.appLimited / c.lifetimeNanos)
                    : Double.NaN;
            ConnectionModel.Alarms al = alarms.get(c.key());
            if (al != null) {
                al.counts.forEach((k, v) -> a.alarms.merge(k, v, Integer::sum));
                if (al.stalls > 0) {
                    a.pacingStalls += al.stalls;
                    a.connectionsWithStalls++;
                    if (c.rttP50 > 0) {
                        long longOnes = al.stallWaits.countAbove(FleetReport.STALL_RTT_FACTOR * c.rttP50);
                        a.stallsLongerThanRtt += longOnes;
                        if (longOnes > 0) {
                            a.connectionsWithLongStalls++;
                        }
                    }
                }
            }
            i++;
        }
        a.goodput = Quantiles.sorted(goodput);
        a.goodputLeftSlowStart = Quantiles.sorted(leftSs);
        a.rttP50Millis = Quantiles.sorted(p50);
        a.rttP95Millis = Quantiles.sorted(p95);
        a.lossRate = Quantiles.sorted(loss);
        a.appLimitedShare = Quantiles.sorted(appLimited);
        return a;
    }
}
