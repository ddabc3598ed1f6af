package dev.ccagent.agent.kwik;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.detect.CpuSpinMonitor;
import dev.ccagent.agent.connection.SendTelemetry;
import dev.ccagent.agent.runtime.AgentRuntime;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;

/**
 * kwik connections as the {@link CpuSpinMonitor} sees them, in both modes: with the controller swap
 * (registered by {@link KwikTelemetry#attach}) and observe-only (registered by
 * {@link KwikObserveModule}'s constructor advice, where nothing else of kwik is touched).
 *
 * <p>Nothing runs on kwik's threads: at each sampling tick the monitor reads, reflectively, the
 * {@code SenderImpl}'s own {@code senderThread} (one per connection: its CPU time is the
 * connection's sending cost) and {@code dataSent} (stream bytes kwik counts as sent: application
 * bytes moved) and its connection's {@code connectionState} (an episode ends with the connection),
 * and, with the swap, the adapter's count of ack-eliciting packets sent.
 */
public final class KwikSpinWatch {

    /** Sender (weakly) to its record. */
    private static final Map<Object, Entry> LIVE = new WeakHashMap<>();
    private static boolean sourceAdded;

    private static final class Entry {
        volatile String id;
        final SendTelemetry telemetry;

        Entry(String id, SendTelemetry telemetry) {
            this.id = id;
            this.telemetry = telemetry;
        }
    }

    /**
     * Per SenderImpl class (one per kwik version and loader): its fields ({@code senderThread},
     * {@code dataSent}, optional {@code connection}); the array is empty when they cannot be read. A
     * {@link ClassValue}, stored with the class itself: a {@link Field} references its declaring class,
     * so as a value of a static map keyed by that class it would keep the class, and its loader,
     * reachable for ever (a redeployed application's kwik could never be unloaded).
     */
    private static final ClassValue<Field[]> FIELDS = new ClassValue<>() {
        @Override
        protected Field[] computeValue(Class<?> type) {
            return senderFields(type);
        }
    };

    /** Kept here: the monitor holds its sources weakly. */
    private static final CpuSpinMonitor.Source CPU_SOURCE = KwikSpinWatch::forEach;

    private KwikSpinWatch() {
    }

    /** A new connection's sender; {@code telemetry} is null in observe-only mode. */
    public static void track(Object sender, String id, SendTelemetry telemetry) { // public: called from helpers in kwik's loader
        AgentConfig config = AgentRuntime.config();
        if (config == null || !config.detect()) {
            return;
        }
        synchronized (LIVE) {
            if (!sourceAdded) {
                sourceAdded = true;
                CpuSpinMonitor.addSource(CPU_SOURCE);
                KwikStreamWatch.register();
            }
            LIVE.put(sender, new Entry(id, telemetry));
        }
    }

    /** The number of connections watched (status, tests). */
    public static int watched() {
        synchronized (LIVE) {
            return LIVE.size();
        }
    }

    /**
     * Each live connection's sender with its connection id (for {@link KwikStreamWatch}, on the detector's
     * thread): the senders are copied under the lock and handed out after.
     */
    static void forEachSender(java.util.function.BiConsumer<Object, String> action) {
        for (Map.Entry<Object, Entry> e : live()) {
            Object sender = e.getKey();
            if (sender == null) {
                continue;
            }
            Entry entry = e.getValue();
            String id = entry.telemetry != null ? entry.telemetry.connectionId() : entry.id;
            action.accept(sender, id != null ? id : "");
        }
    }

    /** The live senders and their records, copied under the lock: read after without it. */
    private static List<Map.Entry<Object, Entry>> live() {
        synchronized (LIVE) {
            return new ArrayList<>(LIVE.entrySet());
        }
    }

    private static void forEach(java.util.function.Consumer<CpuSpinMonitor.Reading> action) {
        for (Map.Entry<Object, Entry> e : live()) {
            Object sender = e.getKey();
            if (sender == null) {
                continue;
            }
            Field[] f = fields(sender.getClass());
            if (f == null) {
                continue;
            }
            CpuSpinMonitor.Reading r = new CpuSpinMonitor.Reading();
            try {
                Thread thread = (Thread) f[0].get(sender);
                if (thread == null || thread.getState() == Thread.State.NEW) {
                    continue; // not started yet
                }
                if (thread.getState() == Thread.State.TERMINATED) {
                    synchronized (LIVE) {
                        LIVE.remove(sender);
                    }
                    continue;
                }
                r.threadId = thread.getId();
                r.thread = thread;
                r.closed = f[2] != null && closing(f[2].get(sender));
                r.appBytes = f[1].getLong(sender);
            } catch (ReflectiveOperationException | RuntimeException ex) {
                continue;
            }
            Entry entry = e.getValue();
            r.key = sender;
            r.library = "kwik";
            if (entry.telemetry != null) {
                r.connectionId = entry.telemetry.connectionId();
                r.arm = "client".equals(entry.telemetry.role()) ? null : entry.telemetry.arm; // the guard judges served connections
            } else {
                r.connectionId = idOf(sender, entry.id);
                entry.id = r.connectionId; // a client's id, once resolved, is kept
            }
            if (entry.telemetry != null) {
                r.ackEliciting = entry.telemetry.inFlightPackets;
            }
            action.accept(r);
        }
    }

    private static String idOf(Object sender, String id) {
        if (id != null && !id.isEmpty()) {
            return id;
        }
        String hex = KwikReflection.connectionIdHexOfSender(sender);
        return hex != null ? hex : "";
    }

    /**
     * Connection class to its {@code connectionState} field (an empty array: not readable); a
     * {@link ClassValue} for the reason given at {@link #FIELDS}.
     */
    private static final ClassValue<Field[]> STATE = new ClassValue<>() {
        @Override
        protected Field[] computeValue(Class<?> type) {
            for (Class<?> c = type; c != null; c = c.getSuperclass()) {
                try {
                    Field found = c.getDeclaredField("connectionState");
                    found.setAccessible(true);
                    return new Field[] {found};
                } catch (ReflectiveOperationException | RuntimeException e) {
                    // keep looking up the hierarchy
                }
            }
            return new Field[0];
        }
    };

    /** Whether kwik's connection is closing, draining or closed (its {@code Status}); false when unknown. */
    private static boolean closing(Object connection) {
        if (connection == null) {
            return false;
        }
        Field[] found = STATE.get(connection.getClass());
        Field state = found.length > 0 ? found[0] : null;
        try {
            Object status = state != null ? state.get(connection) : null;
            if (status instanceof Enum) {
                String name = ((Enum<?>) status).name();
                return name.equals("Closing") || name.equals("Draining") || name.equals("Closed")
                        || name.equals("Failed") || name.equals("Error");
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            return false;
        }
        return false;
    }

    private static Field[] fields(Class<?> type) {
        Field[] f = FIELDS.get(type);
        return f.length > 0 ? f : null;
    }

    private static Field[] senderFields(Class<?> type) {
        Field[] f;
        try {
            f = new Field[] {type.getDeclaredField("senderThread"), type.getDeclaredField("dataSent"), null};
            f[0].setAccessible(true);
            f[1].setAccessible(true);
            try {
                f[2] = type.getDeclaredField("connection"); // optional: ends an episode at close sooner
                f[2].setAccessible(true);
            } catch (ReflectiveOperationException | RuntimeException e) {
                f[2] = null;
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            dev.ccagent.agent.log.AgentLog.warnOnce("kwik-spin-fields", "CPU spin monitor cannot read "
                    + type.getName() + "'s sender thread or data counter; kwik connections are not watched", e);
            f = new Field[0];
        }
        return f;
    }
}
