package dev.ccagent.cc;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * A deterministic test driver for a {@link CongestionController}: the host's bookkeeping (packet
 * numbers, bytes in flight, reusable ack/loss events) plus a simple ack-clocked loop over a path
 * with a fixed RTT and no capacity limit. Time is simulated: nothing waits. Nothing is drawn at random
 * either, so a test on it gets the same figures every run: its bounds fail with odds 0.
 *
 * <p>Low level: {@link #send}, {@link #ack}, {@link #lose}. Loop: {@link #step} delivers the next ack
 * (every {@link #packetsPerAck} packets one RTT after they were sent) and then sends as much as the
 * window allows, so a window is sent and acknowledged per RTT.
 */
public final class TestLink {

    public final CongestionController cc;
    public final int mss;
    /** Fixed path RTT, also reported as latest, smoothed and min RTT. */
    public long rttNanos;
    public int packetsPerAck = 2;
    /** When positive, the sender is application limited to this many bytes in flight. */
    public long appLimitBytes;

    private long now;
    private long nextPacketNumber;
    private long bytesInFlight;
    private final Map<Long, Long> sentTimes = new HashMap<>();
    /** In-flight packet numbers in send order. */
    private final ArrayDeque<Long> flight = new ArrayDeque<>();
    private final AckEvent ackEvent = new AckEvent();
    private final LossEvent lossEvent = new LossEvent();

    public TestLink(CongestionController cc, int mss, long rttNanos) {
        this.cc = cc;
        this.mss = mss;
        this.rttNanos = rttNanos;
    }

    public long now() {
        return now;
    }

    /** Moves the clock forward (never back). */
    public void advanceTo(long timeNanos) {
        now = Math.max(now, timeNanos);
    }

    public long bytesInFlight() {
        return bytesInFlight;
    }

    public long cwnd() {
        return cc.congestionWindow();
    }

    /** Sends one full-size packet now; returns its packet number. */
    public long send() {
        long pn = nextPacketNumber++;
        bytesInFlight += mss;
        sentTimes.put(pn, now);
        flight.addLast(pn);
        cc.onPacketSent(now, pn, mss, bytesInFlight, true);
        return pn;
    }

    /** Acknowledges the given in-flight packets now, reporting the link RTT. */
    public void ack(long... packetNumbers) {
        ackEvent.reset(now, bytesInFlight);
        takeOutOfFlight(ackEvent, packetNumbers);
        ackEvent.latestRttNanos = rttNanos;
        ackEvent.smoothedRttNanos = rttNanos;
        ackEvent.minRttNanos = rttNanos;
        ackEvent.rttVarianceNanos = rttNanos / 2;
        cc.onAck(ackEvent);
    }

    /** Declares the given in-flight packets lost now. */
    public void lose(boolean persistentCongestion, long... packetNumbers) {
        lossEvent.reset(now, bytesInFlight);
        takeOutOfFlight(lossEvent, packetNumbers);
        lossEvent.persistentCongestion = persistentCongestion;
        cc.onPacketsLost(lossEvent);
    }

    /** Adds the given in-flight packets to {@code event} and takes them out of flight. */
    private void takeOutOfFlight(PacketBatch event, long[] packetNumbers) {
        for (long pn : packetNumbers) {
            Long sent = sentTimes.remove(pn);
            if (sent == null) {
                throw new IllegalArgumentException("packet " + pn + " is not in flight");
            }
            flight.remove(pn);
            event.addPacket(pn, sent, mss);
            bytesInFlight -= mss;
        }
    }

    /** Declares the oldest in-flight packet lost now. */
    public void loseOldest() {
        lose(false, flight.peekFirst());
    }

    /** Tells the controller the sender has nothing more to send now. */
    public void onAppLimitedNow() {
        cc.onAppLimited(now, bytesInFlight);
    }

    /** Sends while the window (and the application limit, if any) allows. */
    public void fillWindow() {
        while (cc.canSend(bytesInFlight) && (appLimitBytes <= 0 || bytesInFlight + mss <= appLimitBytes)) {
            send();
        }
        if (appLimitBytes > 0 && cc.canSend(bytesInFlight)) {
            cc.onAppLimited(now, bytesInFlight);
        }
    }

    /**
     * Delivers the next ack (the oldest packets, one RTT after they were sent), then refills the
     * window. Sends first if nothing is in flight.
     */
    public void step() {
        if (flight.isEmpty()) {
            fillWindow();
        }
        deliverNextAck();
        fillWindow();
    }

    private void deliverNextAck() {
        long first = flight.peekFirst();
        advanceTo(sentTimes.get(first) + rttNanos);
        int n = 0;
        long[] batch = new long[packetsPerAck];
        for (Long pn : flight) {
            if (n == packetsPerAck || sentTimes.get(pn) + rttNanos > now) {
                break;
            }
            batch[n++] = pn;
        }
        ack(java.util.Arrays.copyOf(batch, n));
    }

    /** Runs the ack-clocked loop until the clock reaches {@code timeNanos}. */
    public void runUntil(long timeNanos) {
        while (now < timeNanos) {
            step();
        }
    }

    /**
     * Runs until the window is at least {@code bytes}; returns the time it got there, or -1 if it
     * did not by {@code deadlineNanos}.
     */
    public long runUntilWindow(long bytes, long deadlineNanos) {
        while (cwnd() < bytes) {
            if (now >= deadlineNanos) {
                return -1;
            }
            step();
        }
        return now;
    }

    /** Delivers every outstanding ack without sending anything new (the sender goes quiet). */
    public void drain() {
        while (!flight.isEmpty()) {
            deliverNextAck();
        }
    }
}
