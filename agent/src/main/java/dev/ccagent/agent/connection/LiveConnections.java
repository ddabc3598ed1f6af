package dev.ccagent.agent.connection;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;

/**
 * The registry of live connections whose congestion control the agent runs (today kwik's adapters
 * register here), held weakly (a side table: nothing is added to the library's classes, so late
 * attach can retransform them), from its creation to its close. Read by periodic JFR events, the spin
 * detector, detach and status.
 */
public final class LiveConnections {

    private static final Map<LiveConnection, Boolean> LIVE = new WeakHashMap<>();

    private LiveConnections() {
    }

    /** Public: called by a library's hooks, which may be defined in that library's own class loader. */
    public static void register(LiveConnection adapter) {
        synchronized (LIVE) {
            LIVE.put(adapter, Boolean.TRUE);
        }
    }

    /**
     * The connection closed: it leaves the registry at once, not at the next GC, so detach, the periodic events
     * and the spin detector see only open connections (a detach once counted 4 connections closed 6 s earlier
     * as handed to kwik's controller). Public like {@link #register}.
     */
    public static void closed(LiveConnection adapter) {
        synchronized (LIVE) {
            LIVE.remove(adapter);
        }
    }

    /**
     * Detach: hands every live connection to its library's controller (our bytes in flight go with it) and
     * forgets them. Returns how many were switched. Never throws.
     */
    public static int detachAll() {
        int switched = 0;
        for (LiveConnection a : live()) {
            try {
                if (a.switchToStock()) {
                    switched++;
                }
            } catch (Throwable ignored) {
                // switchToStock does not throw; nothing else to do for this one
            }
        }
        synchronized (LIVE) {
            LIVE.clear();
        }
        return switched;
    }

    /** Live connections known (tests, status). */
    public static int size() {
        synchronized (LIVE) {
            return LIVE.size();
        }
    }

    /**
     * The live adapters copied into {@code into} when they fit, else into a new array twice the size needed;
     * the array returned holds them from index 0, followed by null. For the periodic poller, which keeps its
     * array from one period to the next (nothing allocated a connection) and clears it after use, so that
     * it holds no closed connection.
     */
    public static LiveConnection[] copyInto(LiveConnection[] into) {
        synchronized (LIVE) {
            LiveConnection[] out = into.length > LIVE.size() ? into : new LiveConnection[2 * LIVE.size() + 1];
            int n = 0;
            for (LiveConnection a : LIVE.keySet()) {
                out[n++] = a;
            }
            out[n] = null;
            return out;
        }
    }

    /** A copy of the live adapters. */
    public static List<LiveConnection> live() {
        synchronized (LIVE) {
            return new ArrayList<>(LIVE.keySet());
        }
    }
}
