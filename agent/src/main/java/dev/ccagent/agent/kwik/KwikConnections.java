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

    /**
     * Detach: hands every live connection to kwik's controller (our bytes in flight go with it) and
     * forgets them. Returns how many were switched. Never throws.
     */
    public static int detachAll() {
        int switched = 0;
        for (KwikLiveConnection a : live()) {
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

    /** A copy of the live adapters. */
    public static List<KwikLiveConnection> live() {
        synchronized (LIVE) {
            return new ArrayList<>(LIVE.keySet());
        }
    }
}
