package dev.ccagent.agent.kwik;

import tech.kwik.core.common.PnSpace;
import tech.kwik.core.packet.PacketInfo;
import tech.kwik.core.packet.QuicPacket;

import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * One kwik connection's packet times on {@link System#nanoTime()}, safe across wall-clock steps.
 *
 * <p>kwik stamps each packet's send time (before the datagram goes out) and each datagram's receive
 * time (when the socket returned it) with its wall clock ({@code Clock.systemUTC()}), which an NTP step
 * or {@code date -s} moves by any amount in either direction; our algorithms and the connection's
 * measurement run on the monotonic clock. Converting with one offset taken at the connection's start
 * turned every RTT sample after a forward step into 0 and after a backward step into a negative figure
 * (clamped to 1 ns): bbr1's min RTT became 0, its window the minimum, and a 20 Mbit/s download ran at
 * 1.3 Mbit/s (KwikClockStepTest). Taking our own {@code System.nanoTime()} when kwik registers a packet
 * instead is late by whatever delays kwik's sender between its stamp and the registration (the send
 * itself, a preemption): RTT samples came out up to 0.9 ms below the link's propagation delay. So each
 * stamp is converted on its own while it is fresh:
 * <ul>
 *   <li><b>a send stamp when kwik registers the packet</b> ({@link #sent}, from the advice on
 *       {@code LossDetector.packetSent}, microseconds after the stamp): its age on the wall clock, read
 *       now, taken from {@code System.nanoTime()} now, and kept per packet in an open-addressed table
 *       that grows with the packets in flight; the ACK uses the kept figure, whatever the wall clock
 *       did in between;</li>
 *   <li><b>an ACK frame's receive stamp when kwik processes it</b> ({@link #ackReceived}), the same way.</li>
 * </ul>
 * A step between a stamp and its conversion would shift that one age by the step. So at each conversion
 * the offset between the two clocks is compared with the previous one: a change larger than slewing
 * can make (NTP slews at most 500 ppm, plus {@value #STEP_TOLERANCE_NANOS} ns for reading two clocks)
 * is a step, and every stamp that converts to a time before it was seen is not trusted: the packet
 * counts as sent, the ACK as received, when we convert it. So is a negative age (a backward step), and
 * a receive time before our send time of the packet it acknowledges. The two clocks are read in the
 * order that makes a delay between the readings err towards a longer RTT, never a shorter one: the
 * monotonic clock first for a send, the wall clock first for a receipt.
 *
 * <p>Threads: kwik's sender records, its receiver and loss-detection timer look up and forget; every
 * method takes this object's monitor (uncontended in the common case). Nothing here allocates except
 * the table's growth (doubling, at most {@link #MAX_CAPACITY} entries).
 */
final class KwikPacketTimes {

    /** Answer of {@link #recorded} for a packet the table does not hold. */
    static final long UNKNOWN = Long.MIN_VALUE;

    static final int INITIAL_CAPACITY = 32;
    /** 16,384 packets in flight (about 20 MB): 1.6 Gbit/s at 100 ms; beyond, the oldest entries give way. */
    static final int MAX_CAPACITY = 1 << 14;
    /** Reading the two clocks one after the other: their offset moves by this much without any step. */
    static final long STEP_TOLERANCE_NANOS = 1_000_000L;
    /** The fastest slew NTP applies (adjtimex's 500 ppm), as a divisor of the elapsed time. */
    static final long SLEW_DIVISOR = 2_000;

    private static final long EMPTY = -1;
    private static final int APP = PnSpace.App.ordinal();

    private long[] keys;
    private long[] times;
    private int occupied;
    /** kwik's wall clock ({@code Clock.systemUTC()}, which kwik stamps with); the test's own in unit tests. */
    private final Clock wallClock;
    private final LongSupplier monoClock;
    /** Wall minus monotonic when the connection started: the fallback for a packet the table lost. */
    private final long startOffset;

    // the two clocks at the previous conversion, and the last step seen
    private long lastOffset;
    private long lastCheck;
    private long stepSeenAt = Long.MIN_VALUE;
    private long steps;

    KwikPacketTimes() {
        this(Clock.systemUTC(), System::nanoTime);
    }

    KwikPacketTimes(Clock wallClock, LongSupplier monoClock) {
        this.wallClock = wallClock;
        this.monoClock = monoClock;
        keys = new long[INITIAL_CAPACITY];
        times = new long[INITIAL_CAPACITY];
        java.util.Arrays.fill(keys, EMPTY);
        long mono = monoClock.getAsLong();
        startOffset = epochNanos(wallClock.instant()) - mono;
        lastOffset = startOffset;
        lastCheck = mono;
    }

    /** A packet's key: its number within its space (Initial 0, Handshake 1, App 2). */
    static long key(long packetNumber, int spaceOrdinal) {
        return packetNumber * 3 + spaceOrdinal;
    }

    /** {@link #key(long, int)} of a kwik packet. */
    static long key(QuicPacket p) {
        return key(KwikReflection.packetNumber(p), p.getPnSpace().ordinal());
    }

    /**
     * kwik is registering the packet {@code key} that it stamped {@code stamp} (null: no stamp seen, the
     * packet counts as sent now): converts, keeps and returns its send time.
     */
    synchronized long sent(long key, Instant stamp) {
        long mono = monoClock.getAsLong(); // first: a delay before the wall clock's reading makes the send earlier
        long at = stamp != null ? convert(stamp, epochNanos(wallClock.instant()), mono) : mono;
        record(key, at);
        return at;
    }

    /** Keeps {@code at} as the send time of {@code key}. */
    synchronized void record(long key, long at) {
        if (key < 0) {
            return;
        }
        if (2 * (occupied + 1) > keys.length && keys.length < MAX_CAPACITY) {
            grow();
        }
        int i = index(key, keys.length);
        if (keys[i] == EMPTY) {
            occupied++;
        }
        keys[i] = key; // an entry still there is older than a table's worth of packets: it gives way
        times[i] = at;
    }

    /** When {@code key} was sent, or {@link #UNKNOWN}. */
    synchronized long recorded(long key) {
        int i = index(key, keys.length);
        return key >= 0 && keys[i] == key ? times[i] : UNKNOWN;
    }

    /** The packet is acknowledged, lost or discarded: its entry is not needed any more. */
    synchronized void forget(long key) {
        int i = index(key, keys.length);
        if (key >= 0 && keys[i] == key) {
            keys[i] = EMPTY;
            occupied--;
        }
    }

    /**
     * The send times of {@code packets}, just acknowledged, looked up and forgotten in one pass:
     * {@code into[i]} is packet i's, or {@link #UNKNOWN}. Returns {@code into}, or a larger array when
     * it is too small (rare: an ACK of more packets than any before).
     */
    synchronized long[] take(List<? extends PacketInfo> packets, long[] into) {
        int n = packets.size();
        long[] out = into.length >= n ? into : new long[Math.max(n, 2 * into.length)];
        for (int j = 0; j < n; j++) {
            out[j] = UNKNOWN;
            try {
                long key = key(packets.get(j).packet());
                int i = index(key, keys.length);
                if (key >= 0 && keys[i] == key) {
                    out[j] = times[i];
                    keys[i] = EMPTY;
                    occupied--;
                }
            } catch (Throwable ignored) {
                // no send time for this one: it gives no RTT sample
            }
        }
        return out;
    }

    /** Packet {@code i}'s send time in an answer of {@link #take}; an index beyond it has none. */
    static long taken(long[] sendTimes, int i) {
        return i < sendTimes.length ? sendTimes[i] : UNKNOWN;
    }

    /**
     * The packets left flight (declared lost, discarded with their space): their entries are not
     * needed any more. Never throws.
     */
    synchronized void forget(List<? extends PacketInfo> packets) {
        try {
            for (int i = 0, n = packets.size(); i < n; i++) {
                forget(key(packets.get(i).packet()));
            }
        } catch (Throwable ignored) {
            // an entry left behind gives way to a later packet
        }
    }

    /**
     * When the packet {@code key}, stamped {@code wallSent} by kwik, was sent: as kept when it was
     * registered, otherwise {@link #converted}; never after {@code notAfter}.
     */
    long sentTime(long key, Instant wallSent, long notAfter) {
        long t = recorded(key);
        return t != UNKNOWN ? Math.min(t, notAfter) : converted(wallSent, notAfter);
    }

    /**
     * kwik's stamp of a packet the table does not hold, converted with the connection's starting offset
     * (wrong by any step since); never after {@code notAfter}. Callers take no RTT sample from it.
     */
    long converted(Instant wallSent, long notAfter) {
        return wallSent != null ? Math.min(notAfter, epochNanos(wallSent) - startOffset) : notAfter;
    }

    /**
     * The monotonic time of an ACK frame that kwik stamped {@code timeReceived} and processes now; now
     * itself when the stamp cannot be trusted (see the class comment; the acknowledged packet is looked
     * up as a 1-RTT packet: nearly every ACK is one, and for an earlier space's ACK the check at worst
     * moves its time to now).
     */
    synchronized long ackReceived(Instant timeReceived, long largestAcknowledged) {
        long wall = epochNanos(wallClock.instant()); // first: a delay before the monotonic reading makes the receipt later
        long mono = monoClock.getAsLong();
        if (timeReceived == null) {
            return mono;
        }
        long at = convert(timeReceived, wall, mono);
        long largestSent = recorded(key(largestAcknowledged, APP));
        return largestSent != UNKNOWN && at < largestSent ? mono : at;
    }

    /** {@code stamp} on the monotonic clock, given both clocks' readings now; {@code mono} when not trusted. */
    private long convert(Instant stamp, long wall, long mono) {
        long offset = wall - mono;
        if (Math.abs(offset - lastOffset) > STEP_TOLERANCE_NANOS + Math.max(0, mono - lastCheck) / SLEW_DIVISOR) {
            steps++;
            stepSeenAt = mono;
        }
        lastOffset = offset;
        lastCheck = mono;
        long age = wall - epochNanos(stamp);
        long at = mono - age;
        return age < 0 || at < stepSeenAt ? mono : at;
    }

    /** Wall-clock steps seen. */
    synchronized long steps() {
        return steps;
    }

    synchronized int capacity() {
        return keys.length;
    }

    private void grow() {
        long[] oldKeys = keys;
        long[] oldTimes = times;
        int n = oldKeys.length * 2;
        long[] k = new long[n];
        long[] t = new long[n];
        java.util.Arrays.fill(k, EMPTY);
        for (int j = 0; j < oldKeys.length; j++) {
            if (oldKeys[j] != EMPTY) {
                // two keys that meet modulo n met modulo n/2 already: no entry is lost here
                int i = index(oldKeys[j], n);
                k[i] = oldKeys[j];
                t[i] = oldTimes[j];
            }
        }
        keys = k;
        times = t;
    }

    /**
     * The key modulo the capacity. Within one space keys step by 3, which is odd: any {@code capacity}
     * consecutive packet numbers take distinct slots.
     */
    private static int index(long key, int capacity) {
        return (int) (key & (capacity - 1));
    }

    static long epochNanos(Instant t) {
        return t.getEpochSecond() * 1_000_000_000L + t.getNano();
    }
}
