package dev.ccagent.it.kwik;

/**
 * A diagnostic for stalled transfers in the test applications: kwik's own state of one connection, read by
 * reflection from kwik 0.10.x's fields ("?" where a version differs), printed by {@link KwikBulkClient} on a
 * {@code STALL} and by {@link KwikBulkServer} on a {@code dump ODCID} line on its standard input.
 */
public final class KwikState {

    private KwikState() {
    }

    /**
     * kwik's own view of a stalled connection, read by reflection (kwik 0.10.x field names; "?" where a version
     * differs): the handshake state, the RTT estimator (ms), the PTO count, when the loss-detection timer fires
     * (ms from now, "none" when unarmed) and per packet-number space (Initial, Handshake, App) the ack-eliciting
     * packets in flight and the largest acknowledged. Tells a long PTO (RTT samples inflated in a burst) from a
     * connection left without any timer.
     */
    public static String describe(Object conn) {
        try {
            Object sender = field(conn, "sender");
            Object rtt = field(sender, "rttEstimater");
            Object rm = field(sender, "recoveryManager");
            StringBuilder sb = new StringBuilder();
            sb.append("handshake=").append(field(conn, "handshakeState"));
            for (String f : new String[] {"smoothedRtt", "rttVar", "latestRtt", "minRtt"}) {
                sb.append(' ').append(f).append('=').append(field(rtt, f));
            }
            sb.append(" ptoCount=").append(field(rm, "ptoCount"));
            Object expiry = field(rm, "timerExpiration");
            sb.append(" timerIn=").append(expiry == null ? "none"
                    : java.time.Duration.between(java.time.Instant.now(), (java.time.Instant) expiry).toMillis() + "ms");
            Object[] detectors = (Object[]) field(rm, "lossDetectors");
            sb.append(" inFlight/largestAcked=");
            for (Object d : detectors) {
                sb.append(field(d, "ackElicitingInFlight")).append('/').append(field(d, "largestAcked")).append(',');
            }
            sb.append(" sendRequests=");
            for (Object q : (Object[]) field(sender, "sendRequestQueue")) {
                sb.append(((java.util.Collection<?>) field(q, "requestQueue")).size()).append(',');
            }
            // each stream's output: where the writer is, what is buffered and whether a send request is counted
            Object streams = field(field(conn, "streamManager"), "streams");
            for (Object e : ((java.util.Map<?, ?>) streams).entrySet()) {
                Object out = field(((java.util.Map.Entry<?, ?>) e).getValue(), "outputStream");
                sb.append(" stream").append(((java.util.Map.Entry<?, ?>) e).getKey())
                        .append("[offset=").append(field(out, "currentOffset"))
                        .append(" buffered=").append(field(field(out, "sendBuffer"), "bufferedBytes"))
                        .append(" toRetransmit=").append(((java.util.Collection<?>) field(field(out, "retransmitBuffer"), "data")).size())
                        .append(" sendRequestsQueued=").append(field(out, "sendRequestsQueued"))
                        .append(" closed=").append(field(out, "closed")).append(']');
            }
            sb.append(' ').append(congestion(field(sender, "congestionController")));
            return sb.toString();
        } catch (ReflectiveOperationException | RuntimeException e) {
            return "? (" + e + ")";
        }
    }

    static Object field(Object o, String name) throws ReflectiveOperationException {
        for (Class<?> c = o.getClass(); c != null; c = c.getSuperclass()) {
            try {
                java.lang.reflect.Field f = c.getDeclaredField(name);
                f.setAccessible(true);
                return f.get(o);
            } catch (NoSuchFieldException next) {
                // the superclass
            }
        }
        throw new NoSuchFieldException(name + " in " + o.getClass().getName());
    }

    /** kwik's congestion controller as the sender holds it: its count and window (through ccagent's adapter). */
    static String congestion(Object cc) throws ReflectiveOperationException {
        StringBuilder sb = new StringBuilder("cc=").append(cc.getClass().getSimpleName());
        Object kwiks = cc;
        if (cc.getClass().getName().endsWith("KwikControllerAdapter")) {
            Object delegate = field(cc, "delegate");
            sb.append("[ours bytesInFlight=").append(field(cc, "bytesInFlight")).append(" delegate=")
                    .append(delegate == null ? "none" : delegate.getClass().getSimpleName()).append(']');
            kwiks = field(cc, "stock");
        }
        if (kwiks != null) {
            sb.append(" kwik bytesInFlight=").append(field(kwiks, "bytesInFlight"))
                    .append(" window=").append(field(kwiks, "congestionWindow"));
        }
        return sb.toString();
    }
}
