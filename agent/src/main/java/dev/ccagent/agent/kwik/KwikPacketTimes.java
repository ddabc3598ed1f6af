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
 * <p>A send time put in for an untrusted stamp is late by the same delays as above (the datagram's
 * send, a preemption): an RTT sample from it would be too short, and a min RTT filter keeps the
 * shortest. So such a packet is kept as {@linkplain Taken#rttSample estimated} and gives no RTT sample;
 * its send time still serves everything else (loss, delivery rate). (The first send converted after
 * any step is one, stamped before the step or just after it; before this rule, KwikClockStepTest once
 * measured a min RTT of 49.905 ms on a link whose propagation delay is 50 ms.) An untrusted receive time
 * errs the other way, towards a longer sample, and is kept.
 *
 * <p>Threads: kwik's sender records, its receiver and loss-detection timer look up and forget; every
 * method takes this object's monitor (uncontended in the common case). Nothing here allocates except
 * the table's growth (doubling, at most {@link #MAX_CAPACITY} entries).
 */
final class KwikPacketTimes {

    /** Answer of {@link #recorded} for a packet the table does not hold. */
    static final long UNKNOWN = Long.MIN_VALUE;
    /** Answer of {@link #convert} for a stamp that cannot be trusted. */
    private static final long UNTRUSTED = Long.MIN_VALUE;

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
    /** Per entry: its time was put in for a stamp that could not be trusted, not converted from it. */
    private boolean[] estimated;
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
        estimated = new boolean[INITIAL_CAPACITY];
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
     * packet counts as sent now): converts, keeps and returns its send time. A stamp that cannot be
     * trusted counts as sent now too, and the packet gives no RTT sample (see the class comment).
     */
    synchronized long sent(long key, Instant stamp) {
        long mono = monoClock.getAsLong(); // first: a delay before the wall clock's reading makes the send earlier
        if (stamp == null) {
            // no stamp at all (kwik's stamp advice did not run): our registration time is the only
            // figure, and the RTT samples it gives are all there is
            record(key, mono, false);
            return mono;
        }
        long at = convert(stamp, epochNanos(wallClock.instant()), mono);
        boolean untrusted = at == UNTRUSTED;
        if (untrusted) {
            at = mono;
        }
        record(key, at, untrusted);
        return at;
    }

    /**
     * Keeps {@code at} as the send time of {@code key}; {@code estimated}: not kwik's stamp but a time
     * put in for it, which gives no RTT sample.
     */
    synchronized void record(long key, long at, boolean estimated) {
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
        this.estimated[i] = estimated;
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
     * The send times of one ACK's packets ({@link #take}), by their index in the ACK: one instance
     * per connection, reused for every ACK (kwik's receiver thread processes one at a time).
     */
    static final class Taken {
        private long[] at = new long[16];
        private boolean[] estimated = new boolean[16];
        private int count;

        /** Packet {@code i}'s send time, or {@link #UNKNOWN} (not in the table, or beyond the last taken). */
        long at(int i) {
            return i < count ? at[i] : UNKNOWN;
        }

        /**
         * Packet {@code i}'s send time may give an RTT sample: it is known and it is kwik's stamp, not a
         * time put in for a stamp that could not be trusted.
         */
        boolean rttSample(int i) {
            return i < count && at[i] != UNKNOWN && !estimated[i];
        }

        /** No send times (an ACK whose lookup failed). */
        void clear() {
            count = 0;
        }

        int capacity() {
            return at.length;
        }
    }

    /**
     * Looks up and forgets the send times of {@code packets}, just acknowledged, in one pass, into
     * {@code into} (grown when it is too small: rare, an ACK of more packets than any before).
     */
    synchronized void take(List<? extends PacketInfo> packets, Taken into) {
        into.count = 0;
        int n = packets.size();
        if (into.at.length < n) {
            int size = Math.max(n, 2 * into.at.length);
            into.at = new long[size];
            into.estimated = new boolean[size];
        }
        for (int j = 0; j < n; j++) {
            into.at[j] = UNKNOWN;
            into.estimated[j] = false;
            try {
                long key = key(packets.get(j).packet());
                int i = index(key, keys.length);
                if (key >= 0 && keys[i] == key) {
                    into.at[j] = times[i];
                    into.estimated[j] = estimated[i];
                    keys[i] = EMPTY;
                    occupied--;
                }
            } catch (Throwable ignored) {
                // no send time for this one: it gives no RTT sample
            }
        }
        into.count = n;
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
        return at == UNTRUSTED || largestSent != UNKNOWN && at < largestSent ? mono : at;
    }

    /** {@code stamp} on the monotonic clock, given both clocks' readings now; {@link #UNTRUSTED} when not trusted. */
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
        return age < 0 || at < stepSeenAt ? UNTRUSTED : at;
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
        boolean[] oldEstimated = estimated;
        int n = oldKeys.length * 2;
        long[] k = new long[n];
        long[] t = new long[n];
        boolean[] e = new boolean[n];
        java.util.Arrays.fill(k, EMPTY);
        for (int j = 0; j < oldKeys.length; j++) {
            if (oldKeys[j] != EMPTY) {
                // two keys that meet modulo n met modulo n/2 already: no entry is lost here
                int i = index(oldKeys[j], n);
                k[i] = oldKeys[j];
                t[i] = oldTimes[j];
                e[i] = oldEstimated[j];
            }
        }
        keys = k;
        times = t;
        estimated = e;
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
