package dev.ccagent.agent.kwik;

import tech.kwik.core.cc.CongestionController;
import tech.kwik.core.packet.QuicPacket;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;

/**
 * The reflective reach into kwik 0.10.x that the public API does not give: the five private final
 * fields that share one congestion controller per connection, the raw packet number (the public
 * getter boxes it), and the client's original destination connection id. Everything is resolved
 * once; failures surface as exceptions the caller turns into "stock behaviour".
 */
final class KwikReflection {

    static final String SENDER_IMPL = "tech.kwik.core.send.SenderImpl";
    static final String RECOVERY_MANAGER = "tech.kwik.core.recovery.RecoveryManager";
    static final String LOSS_DETECTOR = "tech.kwik.core.recovery.LossDetector";

    /**
     * Test-only fault injection, read once: with {@code -Dccagent.test.kwik-swap-fails=true} every
     * controller swap fails after its first field write, as a JVM that refuses the write of a final
     * field would (JDK 26+ with {@code --illegal-final-field-mutation=deny}); the slot already written
     * is put back. (The precedent: {@code -Dccagent.test.netty-lookup-fails}.)
     */
    static final boolean TEST_SWAP_FAILS = Boolean.getBoolean("ccagent.test.kwik-swap-fails");

    /** Reads {@code QuicPacket.packetNumber} (protected long) without boxing; null if not accessible. */
    private static final MethodHandle PACKET_NUMBER = packetNumberGetter();

    private KwikReflection() {
    }

    private static MethodHandle packetNumberGetter() {
        try {
            return MethodHandles.privateLookupIn(QuicPacket.class, MethodHandles.lookup())
                    .findGetter(QuicPacket.class, "packetNumber", long.class);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    /** The packet's number, allocation free when the raw field is accessible. */
    static long packetNumber(QuicPacket p) {
        if (PACKET_NUMBER != null) {
            try {
                return (long) PACKET_NUMBER.invokeExact(p);
            } catch (Throwable t) {
                // fall through to the public getter
            }
        }
        return p.getPacketNumber();
    }

    static boolean rawPacketNumberAccessible() {
        return PACKET_NUMBER != null;
    }

    /** One field slot that holds the connection's controller. */
    private record Slot(Object owner, Field field) {
    }

    /**
     * Replaces the controller everywhere a SenderImpl shares it (SenderImpl, its RecoveryManager, the
     * RecoveryManager's LossDetectors). All or nothing: on failure the slots already written are put
     * back and the exception is rethrown.
     *
     * @return the controller kwik created (the stock NewReno)
     */
    static CongestionController swapController(Object sender, CongestionController replacement)
            throws ReflectiveOperationException {
        Field senderCc = declared(sender.getClass(), "congestionController");
        CongestionController original = (CongestionController) senderCc.get(sender);
        List<Slot> slots = new ArrayList<>();
        slots.add(new Slot(sender, senderCc));
        Object recovery = declared(sender.getClass(), "recoveryManager").get(sender);
        Field recoveryCc = declared(recovery.getClass(), "congestionController");
        slots.add(new Slot(recovery, recoveryCc));
        Object[] detectors = (Object[]) declared(recovery.getClass(), "lossDetectors").get(recovery);
        for (Object detector : detectors) {
            if (detector != null) {
                slots.add(new Slot(detector, declared(detector.getClass(), "congestionController")));
            }
        }
        for (Slot s : slots) {
            if (s.field().get(s.owner()) != original) {
                throw new IllegalStateException(s.field() + " does not hold the connection's controller");
            }
        }
        List<Slot> written = new ArrayList<>();
        try {
            for (Slot s : slots) {
                if (TEST_SWAP_FAILS && !written.isEmpty()) {
                    throw new IllegalAccessException("injected swap failure (-Dccagent.test.kwik-swap-fails=true): "
                            + s.field() + " not written");
                }
                s.field().set(s.owner(), replacement);
                written.add(s);
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            for (Slot s : written) {
                s.field().set(s.owner(), original);
            }
            throw e;
        }
        return original;
    }

    /** Sets kwik's AbstractCongestionController.bytesInFlight (for a fallback that takes over mid-flight). */
    static void setStockBytesInFlight(CongestionController stock, long bytes) {
        try {
            Field f = null;
            for (Class<?> c = stock.getClass(); c != null && f == null; c = c.getSuperclass()) {
                try {
                    f = c.getDeclaredField("bytesInFlight");
                } catch (NoSuchFieldException e) {
                    // keep looking up the hierarchy
                }
            }
            if (f != null) {
                f.setAccessible(true);
                f.setLong(stock, bytes);
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            // best effort: the stock controller then starts from its own count
        }
    }

    /**
     * The original destination connection id of the connection a {@code SenderImpl} sends for, as
     * hex; null when it cannot be read (yet). The one lookup of a connection's id by the spin watch,
     * the telemetry and the selector.
     */
    static byte[] connectionIdOfSender(Object sender) {
        try {
            return originalDestinationConnectionId(connectionOf(sender));
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            return null;
        }
    }

    /** {@link #connectionIdOfSender} as hex; null when unknown. */
    static String connectionIdHexOfSender(Object sender) {
        byte[] id = connectionIdOfSender(sender);
        return id != null ? KwikConnectionSelector.hex(id) : null;
    }

    /**
     * The original destination connection id of a connection, the same on both ends; null when it
     * cannot be read. Must not be called from the SenderImpl constructor (kwik has not made the
     * connection id manager yet).
     */
    static byte[] originalDestinationConnectionId(Object connection) {
        try {
            for (Class<?> c = connection.getClass(); c != null; c = c.getSuperclass()) {
                for (Method m : c.getDeclaredMethods()) {
                    if (m.getName().equals("getConnectionIdManager") && m.getParameterCount() == 0
                            && !java.lang.reflect.Modifier.isAbstract(m.getModifiers())) {
                        m.setAccessible(true);
                        Object manager = m.invoke(connection);
                        Method odcid = manager.getClass().getMethod("getOriginalDestinationConnectionId");
                        return (byte[]) odcid.invoke(manager);
                    }
                }
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
        return null;
    }

    /** The connection object a SenderImpl belongs to. */
    static Object connectionOf(Object sender) throws ReflectiveOperationException {
        return declared(sender.getClass(), "connection").get(sender);
    }

    private static Field declared(Class<?> type, String name) throws NoSuchFieldException {
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            try {
                Field f = c.getDeclaredField(name);
                f.setAccessible(true);
                return f;
            } catch (NoSuchFieldException e) {
                // superclass next
            }
        }
        throw new NoSuchFieldException(type.getName() + "." + name);
    }

    /** Lower-case hex (kwik's Bytes.bytesToHex format) to bytes; null for blank or malformed input. */
    static byte[] hexToBytes(String hex) {
        if (hex == null || hex.isEmpty() || (hex.length() & 1) != 0) {
            return null;
        }
        byte[] out = new byte[hex.length() / 2];
        for (int i = 0; i < out.length; i++) {
            int hi = Character.digit(hex.charAt(2 * i), 16);
            int lo = Character.digit(hex.charAt(2 * i + 1), 16);
            if (hi < 0 || lo < 0) {
                return null;
            }
            out[i] = (byte) (hi << 4 | lo);
        }
        return out;
    }
}
