package dev.ccagent.report;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * What the report knows of the connections of all the recordings read (filled by {@link EventDecoder}):
 * per connection its last ConnectionSummary, or, for connections without one (older agents), its folded
 * CongestionState samples; the alarms and pacing stalls per connection; the time series per arm; the
 * rollbacks. Small per connection: no event is kept.
 */
final class ConnectionModel {

    /** One connection as the report sees it (its last summary, or its CongestionState samples). */
    static final class Connection {
        String library = "";
        String connectionId = "";
        String role = "";
        String arm = "";
        String algorithm = "";
        String controller = "";
        long sequence = -1;
        double lifetimeNanos = Double.NaN;
        /** First 1-RTT packet to last acknowledgement; NaN when the recording lacks it. */
        double transferNanos = Double.NaN;
        double bytesSent = Double.NaN;
        double bytesAcked = Double.NaN;
        double bytesLost = Double.NaN;
        double rttP50 = Double.NaN;
        double rttP95 = Double.NaN;
        double appLimited = Double.NaN;
        /** 1 left slow start, 0 did not, -1 unknown. */
        int leftSlowStart = -1;
        boolean fromStates;

        /** bytesAcked over transferTime when the agent measured one, else over lifetime (older agents). */
        double goodput() {
            double nanos = transferNanos > 0 ? transferNanos : lifetimeNanos;
            return nanos > 0 && bytesAcked >= 0 ? bytesAcked * 8 / (nanos / 1e9) : Double.NaN;
        }

        double lossRate() {
            return bytesSent > 0 && bytesLost >= 0 ? bytesLost / bytesSent : Double.NaN;
        }

        /** The key of {@link ConnectionModel#alarms} and {@link ConnectionModel#states}. */
        String key() {
            return library + "|" + connectionId;
        }
    }

    /** A connection's CongestionState samples, folded as they stream by. */
    static final class StateSamples {
        String arm;
        String algorithm;
        long firstNanos = Long.MAX_VALUE;
        long lastNanos = Long.MIN_VALUE;
        long minAcked = Long.MAX_VALUE;
        long maxAcked = Long.MIN_VALUE;
        boolean leftSlowStart;
        final LogHistogram rtt = new LogHistogram();
        // periodic samples per mode, and their first and last time: mode shares that do not depend on the
        // order in which the file hands out the events (JFR keeps no time order across threads); each sample
        // counts by its weight (the periods it stands for when the agent sampled: jfr.state-connections)
        String[] modes = new String[2];
        double[] modeWeights = new double[2];
        int periodicSamples;
        double periodicWeight;
        long firstPeriodic = Long.MAX_VALUE;
        long lastPeriodic = Long.MIN_VALUE;
        double lastSrtt;

        void countMode(String mode, long t, double weight) {
            periodicSamples++;
            periodicWeight += weight;
            firstPeriodic = Math.min(firstPeriodic, t);
            lastPeriodic = Math.max(lastPeriodic, t);
            for (int i = 0; i < modes.length; i++) {
                if (modes[i] == null) {
                    modes[i] = mode;
                }
                if (modes[i].equals(mode)) {
                    modeWeights[i] += weight;
                    return;
                }
            }
            modes = Arrays.copyOf(modes, modes.length * 2);
            modeWeights = Arrays.copyOf(modeWeights, modes.length);
            modes[modes.length / 2] = mode;
            modeWeights[modes.length / 2] = weight;
        }

        /** The connection these samples describe, for one that has no summary. */
        Connection toConnection(String key) {
            Connection c = new Connection();
            int bar = key.indexOf('|');
            c.library = key.substring(0, bar);
            c.connectionId = key.substring(bar + 1);
            c.arm = arm;
            c.algorithm = algorithm;
            c.controller = "";
            c.fromStates = true;
            c.lifetimeNanos = lastNanos > firstNanos ? lastNanos - firstNanos : Double.NaN;
            c.bytesAcked = maxAcked >= minAcked ? maxAcked - minAcked : Double.NaN;
            c.rttP50 = rtt.quantile(0.5);
            c.rttP95 = rtt.quantile(0.95);
            c.leftSlowStart = leftSlowStart ? 1 : 0;
            return c;
        }
    }

    /** Alarm counts of one connection (sparse: only connections with alarms). */
    static final class Alarms {
        final Map<String, Integer> counts = new TreeMap<>();
        int stalls;
        LogHistogram stallWaits;
    }

    /** Time series of the periodic CongestionState samples of one arm ("LABEL ALGORITHM"). */
    static final class ArmSeries {
        final TimeSeries cwnd = new TimeSeries();
        final TimeSeries srtt = new TimeSeries();
        final TimeSeries pacing = new TimeSeries();
    }

    /** Last summary per (agentInstance, role, connectionId). */
    final Map<String, Connection> summaries = new HashMap<>();
    /** CongestionState samples per (library, connectionId). */
    final Map<String, StateSamples> states = new HashMap<>();
    /** Alarms per (library, connectionId). */
    final Map<String, Alarms> alarms = new HashMap<>();
    /** Time series per arm name of the CongestionState samples ("LABEL ALGORITHM"). */
    final Map<String, ArmSeries> series = new TreeMap<>();
    final List<FleetReport.Rollback> rollbacks = new ArrayList<>();
    /** Spins of shared event loops themselves per episode, each by its latest event (an ended one first). */
    final Map<String, FleetReport.LoopSpin> loopSpins = new java.util.LinkedHashMap<>();
    /** Flagged allocation windows of event loops (no connection blamed) per loop ("LIBRARY THREAD"). */
    final Map<String, FleetReport.LoopAllocationStorm> loopAllocationStorms = new java.util.LinkedHashMap<>();
    /** Fallbacks per cause ("WHERE (EXCEPTION)"), counted from the Fallback events. */
    final Map<String, FleetReport.FallbackCause> fallbacks = new TreeMap<>();
    /** Module verdicts, each once: keyed by all their fields and the verdict time (the chunk-start repeats share it). */
    final Map<String, FleetReport.ModuleVerdict> moduleVerdicts = new TreeMap<>();
    /** Summaries seen again with the same sequence (the same events in two files), counted once. */
    long duplicateSummaries;

    /** Every connection once: its last summary, or else (no summary at all) its CongestionState samples. */
    List<Connection> connections() {
        Set<String> summarised = new HashSet<>();
        for (Connection c : summaries.values()) {
            summarised.add(c.key());
        }
        List<Connection> all = new ArrayList<>(summaries.values());
        for (Map.Entry<String, StateSamples> e : states.entrySet()) {
            if (!summarised.contains(e.getKey())) {
                all.add(e.getValue().toConnection(e.getKey()));
            }
        }
        return all;
    }

    /** The arm name CongestionState samples are gathered under ("LABEL ALGORITHM"). */
    static String seriesName(String arm, String algorithm) {
        return arm + " " + (algorithm.isEmpty() ? "?" : algorithm);
    }
}
