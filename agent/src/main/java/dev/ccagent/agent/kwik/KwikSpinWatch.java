package dev.ccagent.agent.kwik;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.detect.CpuSpinMonitor;
import dev.ccagent.agent.detect.SendTelemetry;
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

    /** Per SenderImpl class (one per kwik version and loader): its two fields; read on the detector thread only. */
    private static final Map<Class<?>, Field[]> FIELDS = new WeakHashMap<>();

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
                CpuSpinMonitor.addSource(KwikSpinWatch::forEach);
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

    private static void forEach(java.util.function.Consumer<CpuSpinMonitor.Reading> action) {
        List<Map.Entry<Object, Entry>> copy;
        synchronized (LIVE) {
            copy = new ArrayList<>(LIVE.entrySet());
        }
        for (Map.Entry<Object, Entry> e : copy) {
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
        try {
            byte[] odcid = KwikReflection.originalDestinationConnectionId(KwikReflection.connectionOf(sender));
            return odcid != null ? KwikConnectionSelector.hex(odcid) : "";
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            return "";
        }
    }

    /** Connection class to its {@code connectionState} field (null: not readable); detector thread only. */
    private static final Map<Class<?>, Field> STATE = new WeakHashMap<>();

    /** Whether kwik's connection is closing, draining or closed (its {@code Status}); false when unknown. */
    private static boolean closing(Object connection) {
        if (connection == null) {
            return false;
        }
        Field state;
        synchronized (STATE) {
            Class<?> type = connection.getClass();
            if (!STATE.containsKey(type)) {
                Field found = null;
                for (Class<?> c = type; c != null && found == null; c = c.getSuperclass()) {
                    try {
                        found = c.getDeclaredField("connectionState");
                        found.setAccessible(true);
                    } catch (ReflectiveOperationException | RuntimeException e) {
                        found = null;
                    }
                }
                STATE.put(type, found);
            }
            state = STATE.get(type);
        }
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
        synchronized (FIELDS) {
            if (FIELDS.containsKey(type)) {
                return FIELDS.get(type);
            }
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
                f = null;
            }
            FIELDS.put(type, f);
            return f;
        }
    }
}
