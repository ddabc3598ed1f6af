package dev.ccagent.agent.connection;

import dev.ccagent.cc.CcSnapshot;
import dev.ccagent.cc.CongestionMode;

import java.util.function.Supplier;

/**
 * One connection's send-path counters, kept by the library hooks and read by the spin detector's ({@code detect.SpinDetector})
 * timer. Library neutral: kwik's adapter owns one per connection (also when the connection runs the
 * library's stock controller); the Netty module will do the same.
 *
 * <p>Cost: each counter is a plain {@code long} incremented by exactly one thread (the sender thread
 * for everything on the send path, the receiver thread for {@link #packetReceived()}), so the hot
 * path is one non-atomic add and no allocation. The detector reads them from another thread without
 * synchronisation: on 64-bit JVMs plain {@code long} reads are not torn, and a counter read a little
 * late only shifts a count into the next window.
 */
public final class SendTelemetry {

    /** Minimum wait the adapter imposes when a controller answers a send time in the past without budget. */
    public static final long PAST_TIME_MIN_WAIT_NANOS = 1_000_000L;

    // --- identity (written once, read by events)
    private final String library;
    private final boolean ownSenderThread;
    private volatile String connectionId;
    private volatile Supplier<String> idResolver;
    private volatile String role = "";

    // --- sender thread
    /** Sender-loop iterations. */
    public long wakeups;
    /** Iterations that sent no datagram. */
    public long emptyWakeups;
    /** Iterations that ended (fewer than {@link #wakeups} while one runs: a loop stuck inside one shows). */
    public long loopExits;
    /** Datagrams handed to the socket. */
    public long datagramsSent;
    /** Packets registered in flight (ack-eliciting or padded); datagramsSent minus these are ACK-only. */
    public long inFlightPackets;
    /** Bytes of those packets: a PING-bearing ACK is ~50 B, a data packet ~1200 B. */
    public long inFlightBytes;
    /** Times the controller answered "no room" (window or pacer). */
    public long refusals;
    /** Times the controller claimed no budget (rate 0) and answered a send time already in the past. */
    public long pastSendTimes;
    /** The sender thread's id (0 until its first iteration). */
    public volatile long senderThreadId;
    /** The sender thread (null until its first iteration). */
    public volatile Thread senderThread;
    /**
     * A shared sender thread's id in the kernel, for the CPU spin monitor's poll check (-1 before its first iteration,
     * for a connection's own sender thread, which is never poll-checked, or when the kernel does not say).
     */
    public volatile int senderKernelThreadId = -1;
    /** {@link System#nanoTime()} of the sender's first iteration (0 before): the first detector window starts here. */
    public volatile long senderStartNanos;
    /** The connection's arm aggregates once known (spin alarms are counted there; see the guard). */
    public volatile dev.ccagent.agent.measure.ArmStats arm;

    // --- receiver thread
    /** Packets received and processed. */
    public long packetsReceived;
    /** The receiver thread's id (0 until the first packet). */
    public volatile long receiverThreadId;

    // --- pacing-stall bookkeeping (sender thread, under the adapter's lock)
    private long blockedSince;
    private long announcedRelease;

    // --- JFR bookkeeping (under the adapter's lock)
    /** Scratch snapshot for mode-change and pacing-change events. */
    public final CcSnapshot scratch = new CcSnapshot();
    public CongestionMode lastMode;
    public long lastPacingRate = -1;
    public long lastPacingQuantum = -1;

    /** Activity (datagrams + packets received) at the last periodic CongestionState; -1 before the first. */
    public long polledActivity = -1;
    /** The poller's round in which the last periodic CongestionState was written (its thread only). */
    public long polledRound;
    /** The poller's period in which the last periodic CongestionState was written (its thread only). */
    public long polledPeriod;

    /** The counters as the spin detector last sampled them, and its log throttles (its timer thread only). */
    public static final class Baseline {
        public long wakeups;
        public long empty;
        public long datagrams;
        public long inFlight;
        public long inFlightBytes;
        public long refusals;
        public long past;
        public long received;
        public long senderAlloc = -1;
        public long receiverAlloc = -1;
        public long time;
        public long lastLogSpin;
        public long lastLogAck;
        public long lastLogAlloc;
        /** The detector evaluated the window that ends at the close. */
        public boolean finalWindowDone;
        /** The connection's place in the rotation of unflagged SendPathAllocation events; -1 before its first window. */
        public long allocationSlot = -1;
    }

    /** The spin detector's previous sample of this connection (its timer thread only). */
    public final Baseline baseline = new Baseline();

    // --- the connection's end (written once by the closing thread, published by closedAt)
    public long senderAllocAtClose = -1;
    public long receiverAllocAtClose = -1;
    /**
     * The counters at the close ({@link #sampleAtClose}): the last window ends at the close, so its counts
     * end there too. A sender loop still turns until the library shuts it down, and the detector reads the
     * window up to a second later; counting those turns in a window that says it ended at the close
     * overstated its rates (JfrSpinDetectionTest: 853 wake-ups in a 660 ms last window at ~880 a second).
     */
    public CountsAtClose atClose;
    public String algorithmAtClose = "";
    /** {@link System#nanoTime()} of the close (0 while open); volatile: publishes the fields above. */
    public volatile long closedAt;

    /**
     * @param ownSenderThread whether the connection's sender thread serves this connection alone from
     *                        its start (kwik: one thread per connection), so that the thread's allocation
     *                        counter is the connection's from zero; false for a shared event loop
     */
    public SendTelemetry(String library, boolean ownSenderThread) {
        this.library = library;
        this.ownSenderThread = ownSenderThread;
    }

    /** Copies the counters into {@link #atClose}; once, on the closing thread, before {@link #closedAt} is set. */
    public void sampleAtClose() {
        atClose = new CountsAtClose(wakeups, emptyWakeups, datagramsSent, inFlightPackets, inFlightBytes, refusals,
                pastSendTimes, packetsReceived);
    }

    /** The sender's and receiver's counters as they stood at the close (80 bytes, allocated once per close). */
    public static final class CountsAtClose {
        public final long wakeups;
        public final long empty;
        public final long datagrams;
        public final long inFlight;
        public final long inFlightBytes;
        public final long refusals;
        public final long past;
        public final long received;

        CountsAtClose(long wakeups, long empty, long datagrams, long inFlight, long inFlightBytes, long refusals,
                      long past, long received) {
            this.wakeups = wakeups;
            this.empty = empty;
            this.datagrams = datagrams;
            this.inFlight = inFlight;
            this.inFlightBytes = inFlightBytes;
            this.refusals = refusals;
            this.past = past;
            this.received = received;
        }
    }

    /** Whether the sender thread's allocation counter counts this connection alone, from zero. */
    public boolean ownSenderThread() {
        return ownSenderThread;
    }

    /** Whether the connection has ended ({@code SpinDetector.connectionClosed}). */
    public boolean closed() {
        return closedAt != 0;
    }

    public String library() {
        return library;
    }

    /** The connection id (hex), resolved lazily on the first call after the connection is up. */
    public String connectionId() {
        String id = connectionId;
        if (id == null) {
            Supplier<String> r = idResolver;
            if (r != null) {
                try {
                    id = r.get();
                } catch (RuntimeException e) {
                    id = null;
                }
            }
            if (id != null) {
                connectionId = id;
            }
        }
        return id != null ? id : "";
    }

    public void setConnectionId(String id) {
        this.connectionId = id == null || id.isEmpty() ? null : id;
    }

    public void setIdResolver(Supplier<String> resolver) {
        this.idResolver = resolver;
    }

    public String role() {
        return role;
    }

    public void setRole(String role) {
        this.role = role;
    }

    // ------------------------------------------------------------ sender-thread hooks

    /** Start of a sender-loop iteration; returns the datagram count to compare at its end. */
    public long loopEnter() {
        if (senderThreadId == 0) {
            senderThread = Thread.currentThread();
            if (!ownSenderThread) {
                senderKernelThreadId = dev.ccagent.agent.os.KernelThreads.currentId(); // read once per thread
            }
            senderThreadId = senderThread.getId();
            senderStartNanos = System.nanoTime();
        }
        wakeups++;
        return datagramsSent;
    }

    public void loopExit(long datagramsBefore) {
        loopExits++;
        if (datagramsSent == datagramsBefore) {
            emptyWakeups++;
        }
    }

    public void datagramSent() {
        datagramsSent++;
    }

    public void packetInFlight(int bytes) {
        inFlightPackets++;
        inFlightBytes += bytes;
    }

    /** The pacer refused until {@code releaseAt}. */
    public void pacerRefused(long now, long releaseAt) {
        refusals++;
        if (blockedSince == 0) {
            blockedSince = now;
            announcedRelease = releaseAt;
        }
    }

    /**
     * The window (not the pacer) refused. A pacer wait in progress ends here: from now on the
     * sender waits for an ACK, and counting that time would report a pacing stall that is none.
     */
    public void windowRefused() {
        refusals++;
        blockedSince = 0;
    }

    /** No budget, yet a send time in the past: counted, and the caller waits {@link #PAST_TIME_MIN_WAIT_NANOS}. */
    public void pastSendTime(long now) {
        refusals++;
        pastSendTimes++;
        if (blockedSince == 0) {
            blockedSince = now;
            announcedRelease = now;
        }
    }

    /**
     * The controller allowed a packet. When a pacer refusal preceded it, returns how long the sender was
     * held (nanoseconds) and leaves the announced wait in {@link #lastAnnouncedWait()}; otherwise -1.
     */
    public long allowed(long now) {
        if (blockedSince == 0) {
            return -1;
        }
        long held = now - blockedSince;
        lastAnnouncedWait = Math.max(0, announcedRelease - blockedSince);
        blockedSince = 0;
        return held;
    }

    private long lastAnnouncedWait;

    public long lastAnnouncedWait() {
        return lastAnnouncedWait;
    }

    // ------------------------------------------------------------ receiver-thread hook

    public void packetReceived() {
        if (receiverThreadId == 0) {
            receiverThreadId = Thread.currentThread().getId();
        }
        packetsReceived++;
    }
}
