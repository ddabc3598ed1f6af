package dev.ccagent.agent.kwik;

import dev.ccagent.agent.detect.StreamStallMonitor;
import dev.ccagent.agent.log.AgentLog;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * kwik's streams as the {@link StreamStallMonitor} sees them: once per detector window, on the detector's
 * thread, it walks the connections {@link KwikSpinWatch} tracks (both modes), their
 * {@code StreamManager.streams} and each stream's {@code StreamOutputStreamImpl}, and reads kwik's own
 * state. Nothing is instrumented for it and nothing runs on kwik's threads; it names no kwik type, so
 * the agent's one copy serves kwik in any loader, and it keeps no kwik object beyond one sample.
 *
 * <p>A stream is reported stalled when, at that sample:
 * <ol>
 *   <li>kwik has more to send on it: bytes buffered, lost data to send again, or the FIN (its own
 *       end-of-stream marker) queued;</li>
 *   <li>no send request is queued: {@code sendRequestsQueued} at most 0 (kwik 0.10.5+), or the flag
 *       {@code sendRequestQueued} false (kwik 0.10.0-0.10.4);</li>
 *   <li>the stream is neither reset nor aborted, and its connection is not closing;</li>
 *   <li>nothing ack-eliciting is in flight on the connection (every {@code LossDetector.ackElicitingInFlight}
 *       is 0): kwik arms its loss-detection timer only when something is, so no probe will come;</li>
 *   <li>flow control does not block it: for new data, {@code FlowControl.getFlowControlLimit(stream)} is
 *       beyond its {@code currentOffset} (read last, for the few streams that pass 1-4, as it takes kwik's
 *       flow-control lock); lost data and a FIN alone are sent whatever the limit.</li>
 * </ol>
 * A stream that meets 1-3 but not 4 or 5 is reported {@code hidden}: an open episode goes on while its
 * figures stay put. A reset or aborted stream is reported {@code closed}.
 * The connection's PTO is kwik's {@code SenderImpl.getPto()}.
 */
public final class KwikStreamWatch {

    private static final Object[] NO_ARGS = new Object[0];
    /** The class the stall fix transforms (the fix is on for a loader when this type was transformed there). */
    static final String STREAM_OUTPUT = "tech.kwik.core.stream.StreamOutputStreamImpl";
    /** A member kwik does not have. */
    private static final Object MISSING = new Object();

    /**
     * Per kwik class: its fields and methods by name, found once. A {@link ClassValue}, stored with the
     * class itself: a member references its declaring class, so a static map keyed by the class would
     * keep a redeployed application's loader reachable for ever.
     */
    private static final ClassValue<Map<String, Object>> MEMBERS = new ClassValue<>() {
        @Override
        protected Map<String, Object> computeValue(Class<?> type) {
            return new ConcurrentHashMap<>();
        }
    };

    /** Kept here: the monitor holds its sources weakly. */
    private static final StreamStallMonitor.Source SOURCE = KwikStreamWatch::forEach;
    private static boolean added;

    private KwikStreamWatch() {
    }

    /** Adds kwik's streams to the stall monitor (once; called when the first connection is tracked). */
    static synchronized void register() {
        if (!added) {
            added = true;
            StreamStallMonitor.addSource(SOURCE);
        }
    }

    private static void forEach(Consumer<StreamStallMonitor.Reading> sink) {
        StreamStallMonitor.Reading r = new StreamStallMonitor.Reading();
        KwikSpinWatch.forEachSender((sender, id) -> {
            try {
                sender(sender, id, r, sink);
            } catch (ReflectiveOperationException | RuntimeException e) {
                if (AgentLog.enabled(AgentLog.Level.DEBUG)) { // a connection closing under the sample, or a kwik without a member
                    AgentLog.debug("stream stall watch could not read kwik connection " + id + "'s streams: " + e);
                }
            }
        });
    }

    static void sender(Object sender, String id, StreamStallMonitor.Reading r,
                       Consumer<StreamStallMonitor.Reading> sink) throws ReflectiveOperationException {
        Object connection = get(sender, "connection");
        if (connection == null || closing(connection)) {
            return; // its streams are not reported: their episodes end (close)
        }
        Method streamManager = method(connection.getClass(), "getStreamManager", 0);
        Object manager = streamManager != null ? streamManager.invoke(connection, NO_ARGS) : null;
        Object streams = manager != null ? get(manager, "streams") : null;
        if (!(streams instanceof Map)) {
            return;
        }
        int inFlight = -1; // read once per connection, and only when a stream has data with no request
        long ptoNanos = -1;
        for (Object stream : ((Map<?, ?>) streams).values()) {
            Object out = get(stream, "outputStream");
            if (out == null || field(out.getClass(), "sendBuffer") == null) {
                continue; // a receive-only stream (kwik's NullStreamOutputStream)
            }
            r.clear();
            r.key = out;
            r.library = "kwik";
            r.connectionId = id != null ? id : "";
            r.closed = bool(out, "reset") || bool(out, "aborted");
            Object buffer = get(out, "sendBuffer");
            AtomicInteger bytes = (AtomicInteger) get(buffer, "bufferedBytes");
            int waiting = bytes != null ? bytes.get() : 0;
            boolean resend = !queueEmpty(get(out, "retransmitBuffer"), "data");
            if (!r.closed && (waiting > 0 || resend || finPending(buffer)) && queued(out) <= 0) {
                // stuck unless something else restarts it: in flight, or flow control to be lifted
                if (inFlight < 0) {
                    inFlight = inFlight(sender);
                }
                long offset = ((Field) field(out.getClass(), "currentOffset")).getLong(out);
                // kwik checks flow control only for new data: lost data and a FIN alone go out regardless
                boolean flowBlocked = inFlight == 0 && waiting > 0 && !resend && flowLimit(out, stream) <= offset;
                r.stalled = inFlight == 0 && !flowBlocked;
                r.hidden = !r.stalled;
                if (ptoNanos < 0 && r.stalled) {
                    ptoNanos = pto(sender);
                }
                r.streamId = ((Field) field(stream.getClass(), "streamId")).getInt(stream);
                r.offset = offset;
                r.bytesWaiting = waiting;
                r.retransmitPending = resend;
                r.writerBlocked = get(buffer, "blockingWriterThread") != null;
                r.ptoNanos = Math.max(ptoNanos, 0);
                r.fixOn = dev.ccagent.agent.instrument.Transformed.in(STREAM_OUTPUT, out.getClass().getClassLoader());
            }
            sink.accept(r);
        }
    }

    /** The FIN is queued (kwik's own end-of-stream marker, by identity) and not sent. */
    private static boolean finPending(Object buffer) throws ReflectiveOperationException {
        Object q = buffer != null ? get(buffer, "sendQueue") : null;
        Object marker = buffer != null ? get(buffer, "END_OF_STREAM_MARKER") : null;
        if (!(q instanceof Queue) || marker == null || ((Queue<?>) q).isEmpty()) {
            return false;
        }
        for (Object item : (Queue<?>) q) {
            if (item == marker) {
                return true;
            }
        }
        return false;
    }

    private static boolean queueEmpty(Object holder, String name) throws ReflectiveOperationException {
        Object q = holder != null ? get(holder, name) : null;
        return !(q instanceof Queue) || ((Queue<?>) q).isEmpty();
    }

    /** Send requests queued for the stream: kwik 0.10.5+'s counter, or 0.10.0-0.10.4's flag as 0 or 1. */
    private static int queued(Object out) throws ReflectiveOperationException {
        Object counter = field(out.getClass(), "sendRequestsQueued");
        if (counter != null) {
            Object value = ((Field) counter).get(out);
            return value instanceof AtomicInteger ? ((AtomicInteger) value).get() : 1;
        }
        Object flag = field(out.getClass(), "sendRequestQueued");
        if (flag != null && ((Field) flag).getType() == boolean.class) {
            return ((Field) flag).getBoolean(out) ? 1 : 0;
        }
        return 1; // unknown: never reported
    }

    /** Ack-eliciting packets in flight over the connection's packet-number spaces; 1 when it cannot be read. */
    private static int inFlight(Object sender) throws ReflectiveOperationException {
        Object recovery = get(sender, "recoveryManager");
        Object detectors = recovery != null ? get(recovery, "lossDetectors") : null;
        if (!(detectors instanceof Object[])) {
            return 1;
        }
        int sum = 0;
        for (Object d : (Object[]) detectors) {
            Object n = d != null ? get(d, "ackElicitingInFlight") : null;
            if (!(n instanceof AtomicInteger)) {
                return 1;
            }
            sum += ((AtomicInteger) n).get();
        }
        return sum;
    }

    /** kwik's flow-control limit for the stream (stream and connection credit); -1 when it cannot be read. */
    private static long flowLimit(Object out, Object stream) throws ReflectiveOperationException {
        Object control = get(out, "flowController");
        Method limit = control != null ? method(control.getClass(), "getFlowControlLimit", 1) : null;
        if (limit == null) {
            return -1;
        }
        try {
            Object value = limit.invoke(control, stream);
            return value instanceof Long ? (Long) value : -1;
        } catch (java.lang.reflect.InvocationTargetException e) {
            return -1; // the stream was closed meanwhile (kwik unboxes a removed entry)
        }
    }

    /** kwik's {@code SenderImpl.getPto()} in nanoseconds; 0 when it cannot be read (the floor applies). */
    private static long pto(Object sender) throws ReflectiveOperationException {
        Method pto = method(sender.getClass(), "getPto", 0);
        Object ms = pto != null ? pto.invoke(sender, NO_ARGS) : null;
        return ms instanceof Integer ? (Integer) ms * 1_000_000L : 0;
    }

    /** Whether kwik's connection is closing, draining or closed (its {@code Status}); false when unknown. */
    private static boolean closing(Object connection) throws ReflectiveOperationException {
        Object status = get(connection, "connectionState");
        if (!(status instanceof Enum)) {
            return false;
        }
        switch (((Enum<?>) status).name()) {
            case "CloseRequested":
            case "Closing":
            case "Draining":
            case "Closed":
            case "Failed":
            case "Error":
                return true;
            default:
                return false;
        }
    }

    private static boolean bool(Object target, String name) throws ReflectiveOperationException {
        Object f = field(target.getClass(), name);
        return f != null && ((Field) f).getType() == boolean.class && ((Field) f).getBoolean(target);
    }

    private static Object get(Object target, String name) throws ReflectiveOperationException {
        Object f = field(target.getClass(), name);
        return f != null ? ((Field) f).get(target) : null;
    }

    /** The field {@code name} of {@code type} or a superclass, made accessible; null when kwik has none. */
    static Object field(Class<?> type, String name) {
        Map<String, Object> members = MEMBERS.get(type);
        Object found = members.get(name);
        if (found == null) {
            found = MISSING;
            for (Class<?> c = type; c != null && found == MISSING; c = c.getSuperclass()) {
                try {
                    Field f = c.getDeclaredField(name);
                    f.setAccessible(true);
                    found = f;
                } catch (NoSuchFieldException e) {
                    // up the hierarchy
                } catch (RuntimeException | LinkageError e) { // inaccessible (a named module): not read
                    break;
                }
            }
            members.put(name, found);
        }
        return found == MISSING ? null : found;
    }

    /** The method {@code name} with {@code params} parameters of {@code type} or a superclass, made accessible. */
    static Method method(Class<?> type, String name, int params) {
        Map<String, Object> members = MEMBERS.get(type);
        String key = name; // no field shares a name with these methods
        Object found = members.get(key);
        if (found == null) {
            found = MISSING;
            for (Class<?> c = type; c != null && found == MISSING; c = c.getSuperclass()) {
                Method[] declared;
                try {
                    declared = c.getDeclaredMethods();
                } catch (LinkageError e) { // a type its methods name is not there: not called
                    break;
                }
                for (Method m : declared) {
                    if (m.getName().equals(name) && m.getParameterCount() == params && !m.isBridge()) {
                        try {
                            m.setAccessible(true);
                            found = m;
                        } catch (RuntimeException e) {
                            // inaccessible: not called
                        }
                        break;
                    }
                }
            }
            members.put(key, found);
        }
        return found == MISSING ? null : (Method) found;
    }
}
