package dev.ccagent.agent.kwik;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;

/**
 * The adapters of live kwik connections, held weakly (a side table: nothing is added to kwik's
 * classes, so late attach can retransform them). Read by periodic JFR events and status.
 */
public final class KwikConnections {

    private static final Map<KwikLiveConnection, Boolean> LIVE = new WeakHashMap<>();

    private KwikConnections() {
    }

    /** Public: called by the hooks, which may be defined in kwik's own class loader (see KwikLinkage). */
    public static void register(KwikLiveConnection adapter) {
        synchronized (LIVE) {
            LIVE.put(adapter, Boolean.TRUE);
        }
    }

    /** A copy of the live adapters. */
    public static List<KwikLiveConnection> live() {
        synchronized (LIVE) {
            return new ArrayList<>(LIVE.keySet());
        }
    }
}
