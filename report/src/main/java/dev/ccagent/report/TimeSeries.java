package dev.ccagent.report;

import java.util.ArrayList;
import java.util.List;

/**
 * One quantity of one arm over connection age (time since the connection's first periodic
 * CongestionState sample): a histogram per time bin, for the median and p10/p90 per bin. At most
 * {@link #MAX_BINS} bins: the bin width doubles (neighbouring bins merge) to stay below.
 */
final class TimeSeries {

    /** Time-series bins per arm at most (the bin width doubles to stay below). */
    static final int MAX_BINS = 240;
    static final long FIRST_BIN_NANOS = 250_000_000L;

    long binNanos = FIRST_BIN_NANOS;
    final List<LogHistogram> bins = new ArrayList<>();

    void add(long sinceStartNanos, double v) {
        long b = Math.max(0, sinceStartNanos) / binNanos;
        while (b >= MAX_BINS) {
            List<LogHistogram> merged = new ArrayList<>();
            for (int i = 0; i < bins.size(); i += 2) {
                LogHistogram h = new LogHistogram();
                h.addAll(bins.get(i));
                if (i + 1 < bins.size()) {
                    h.addAll(bins.get(i + 1));
                }
                merged.add(h);
            }
            bins.clear();
            bins.addAll(merged);
            binNanos *= 2;
            b = Math.max(0, sinceStartNanos) / binNanos;
        }
        while (bins.size() <= b) {
            bins.add(new LogHistogram());
        }
        bins.get((int) b).add(v);
    }

    void copyTo(TimeSeries to) {
        to.binNanos = binNanos;
        to.bins.addAll(bins);
    }
}
