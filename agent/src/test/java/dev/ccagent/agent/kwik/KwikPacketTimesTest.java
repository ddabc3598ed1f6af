package dev.ccagent.agent.kwik;

import org.junit.jupiter.api.Test;

import tech.kwik.core.frame.PingFrame;
import tech.kwik.core.impl.Version;
import tech.kwik.core.packet.PacketInfo;
import tech.kwik.core.packet.QuicPacket;
import tech.kwik.core.packet.ShortHeaderPacket;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class KwikPacketTimesTest {

    /** A wall clock the test sets (kwik's {@code Clock.systemUTC()} in production). */
    static final class WallClock extends Clock {
        long epochNanos = 1_800_000_000_000_000_000L;

        @Override
        public Instant instant() {
            return Instant.ofEpochSecond(0, epochNanos);
        }

        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            throw new UnsupportedOperationException();
        }

        Instant at(long nanos) {
            return Instant.ofEpochSecond(0, nanos);
        }
    }

    static final int APP = 2;
    static final long MS = 1_000_000;

    /** Both clocks, moved together (time passing) or the wall clock alone (a step). */
    static final class Clocks {
        final WallClock wall = new WallClock();
        long mono = 5_000 * MS;

        void pass(long nanos) {
            wall.epochNanos += nanos;
            mono += nanos;
        }

        /** kwik's stamp of a moment {@code ago} nanoseconds before now. */
        Instant stamp(long ago) {
            return wall.at(wall.epochNanos - ago);
        }

        KwikPacketTimes times() {
            return new KwikPacketTimes(wall, () -> mono);
        }
    }

    /** Each test's clocks, and a table that reads them (fresh for every test). */
    private final Clocks c = new Clocks();
    private final KwikPacketTimes t = c.times();

    @Test
    void aSendStampIsConvertedWhenRegisteredAndKeptWhateverTheClockDoesLater() {
        long key = KwikPacketTimes.key(7, APP);
        c.pass(10 * MS);
        long sent = c.mono - 30_000; // kwik stamped it 30 us before registering it
        assertEquals(sent, t.sent(key, c.stamp(30_000)));
        c.wall.epochNanos += 1_000 * MS; // a forward step
        c.pass(50 * MS);
        assertEquals(sent, t.sentTime(key, c.stamp(50 * MS), c.mono));
        t.forget(key);
        assertEquals(KwikPacketTimes.UNKNOWN, t.recorded(key));
        // a packet the table does not hold: kwik's stamp with the starting offset, never after the bound
        assertEquals(c.mono, t.sentTime(key, c.stamp(50 * MS), c.mono));
        // the starting offset: wall 1.8e18 at mono 5,000 ms
        assertEquals(5_010 * MS, t.converted(c.wall.at(1_800_000_000_000_000_000L + 10 * MS), c.mono));
    }

    @Test
    void noStampCountsAsSentNow() {
        assertEquals(c.mono, t.sent(KwikPacketTimes.key(1, APP), null));
        assertEquals(c.mono, t.recorded(KwikPacketTimes.key(1, APP)));
    }

    @Test
    void ackReceiveTimeIsItsAgeBeforeNow() {
        long sent = t.sent(KwikPacketTimes.key(1, APP), c.stamp(0));
        c.pass(52 * MS);
        // stamped 2 ms before it is processed: 50 ms after the send
        assertEquals(sent + 50 * MS, t.ackReceived(c.stamp(2 * MS), 1));
        assertEquals(0, t.steps());
    }

    @Test
    void aStepBetweenAStampAndItsConversionIsNotTrusted() {
        for (long step : new long[]{+1_000 * MS, -1_000 * MS, +3 * MS, -3 * MS}) {
            Clocks c = new Clocks();
            KwikPacketTimes t = c.times();
            t.sent(KwikPacketTimes.key(1, APP), c.stamp(0));
            c.pass(48 * MS);
            Instant first = c.stamp(0); // two ACKs received before the step
            Instant second = c.stamp(0);
            c.wall.epochNanos += step;
            c.pass(2 * MS);
            assertEquals(c.mono, t.ackReceived(first, 1), "step " + step);
            assertEquals(1, t.steps(), "step " + step);
            // the second one is processed after the step was seen: it converts to before then, not trusted either
            c.pass(MS);
            assertEquals(c.mono, t.ackReceived(second, 1), "step " + step);
            assertEquals(1, t.steps(), "step " + step);
            // stamps taken after the step are trusted again
            c.pass(MS);
            Instant third = c.stamp(0);
            c.pass(MS);
            assertEquals(c.mono - MS, t.ackReceived(third, 1), "step " + step);
        }
    }

    @Test
    void aSendStampFromBeforeAStepGivesWayToTheRegistrationTimeAndNoRttSample() {
        c.pass(10 * MS);
        Instant stamp = c.stamp(0);
        c.wall.epochNanos += 1_000 * MS;
        c.pass(20_000);
        assertEquals(c.mono, t.sent(KwikPacketTimes.key(1, APP), stamp));
        assertEquals(1, t.steps());
        KwikPacketTimes.Taken taken = new KwikPacketTimes.Taken();
        t.take(List.of(info(1)), taken);
        assertEquals(c.mono, taken.at(0), "its send time still serves loss and delivery rate");
        assertFalse(taken.rttSample(0), "20 us late: a sample from it would be 20 us short");
    }

    /**
     * The first conversion after a step sees the step, and distrusts its own stamp even when kwik took it
     * after the step: the registration time put in for it is late by the datagram's send, which gave
     * KwikClockStepTest a min RTT of 49.905 ms on a 50 ms link. Such a packet gives no RTT sample; the next
     * ones, stamped after the step was seen, give theirs again.
     */
    @Test
    void onlyStampsConvertedWhileTrustedGiveRttSamples() {
        for (long step : new long[]{+1_000 * MS, -1_000 * MS}) {
            Clocks c = new Clocks();
            KwikPacketTimes t = c.times();
            c.pass(10 * MS);
            t.sent(KwikPacketTimes.key(1, APP), c.stamp(30_000));
            c.wall.epochNanos += step;
            Instant afterStep = c.stamp(0);
            c.pass(700_000); // kwik stamped packet 2 after the step, and sent it: 0.7 ms before it registers it
            assertEquals(c.mono, t.sent(KwikPacketTimes.key(2, APP), afterStep), "step " + step);
            c.pass(50_000);
            long third = c.mono - 30_000;
            assertEquals(third, t.sent(KwikPacketTimes.key(3, APP), c.stamp(30_000)), "step " + step);
            assertEquals(1, t.steps(), "step " + step);
            KwikPacketTimes.Taken taken = new KwikPacketTimes.Taken();
            t.take(List.of(info(1), info(2), info(3)), taken);
            assertTrue(taken.rttSample(0), "before the step, converted before it: " + step);
            assertFalse(taken.rttSample(1), "converted when the step was seen: " + step);
            assertTrue(taken.rttSample(2), "stamped and converted after the step was seen: " + step);
            assertEquals(third, taken.at(2));
        }
    }

    @Test
    void aPacketRegisteredWithoutAStampGivesSamplesFromItsRegistration() {
        // no stamp advice ran: the registration time is the only figure there is
        t.sent(KwikPacketTimes.key(1, APP), null);
        KwikPacketTimes.Taken taken = new KwikPacketTimes.Taken();
        t.take(List.of(info(1)), taken);
        assertTrue(taken.rttSample(0));
    }

    private static PacketInfo info(long pn) {
        QuicPacket p = new ShortHeaderPacket(Version.getDefault(), new byte[8], new PingFrame());
        p.setPacketNumber(pn);
        return new PacketInfo(Instant.EPOCH, p, lost -> { });
    }

    @Test
    void slewingIsNoStep() {
        // 10 s at 500 ppm: the wall clock gains 5 ms, within the slew allowance
        c.pass(10_000 * MS);
        c.wall.epochNanos += 5 * MS;
        long sent = t.sent(KwikPacketTimes.key(3, APP), c.stamp(0));
        c.pass(50 * MS);
        assertEquals(sent + 49 * MS, t.ackReceived(c.stamp(MS), 3));
        assertEquals(0, t.steps());
    }

    @Test
    void aReceiveTimeBeforeTheSendOrANegativeAgeIsNotTrusted() {
        c.pass(45 * MS);
        t.sent(KwikPacketTimes.key(4, APP), c.stamp(0));
        c.pass(5 * MS);
        // stamped as if 20 ms old, but the acknowledged packet left 5 ms ago
        assertEquals(c.mono, t.ackReceived(c.stamp(20 * MS), 4));
        // stamped in the future
        assertEquals(c.mono, t.ackReceived(c.stamp(-20 * MS), 4));
        assertEquals(c.mono, t.ackReceived(null, 4));
        assertEquals(0, t.steps());
    }

    @Test
    void theTableGrowsWithThePacketsInFlightAndGivesWayAtItsBound() {
        int inFlight = 1_000;
        for (long pn = 0; pn < inFlight; pn++) {
            t.record(KwikPacketTimes.key(pn, APP), 1_000 + pn, false);
        }
        for (long pn = 0; pn < inFlight; pn++) {
            assertEquals(1_000 + pn, t.recorded(KwikPacketTimes.key(pn, APP)));
        }
        assertEquals(2_048, t.capacity());
        // a steady window: a million packets, each acknowledged 1,000 packets later, keep the table as it is
        for (long pn = inFlight; pn < 1_000_000; pn++) {
            t.record(KwikPacketTimes.key(pn, APP), pn, false);
            long old = KwikPacketTimes.key(pn - inFlight, APP);
            assertTrue(t.recorded(old) != KwikPacketTimes.UNKNOWN, "lost " + (pn - inFlight));
            t.forget(old);
        }
        assertEquals(2_048, t.capacity());
        // beyond the bound the oldest give way
        KwikPacketTimes full = new Clocks().times();
        for (long pn = 0; pn < 2L * KwikPacketTimes.MAX_CAPACITY; pn++) {
            full.record(KwikPacketTimes.key(pn, APP), pn, false);
        }
        assertEquals(KwikPacketTimes.MAX_CAPACITY, full.capacity());
        assertEquals(KwikPacketTimes.UNKNOWN, full.recorded(KwikPacketTimes.key(0, APP)));
        long last = 2L * KwikPacketTimes.MAX_CAPACITY - 1;
        assertEquals(last, full.recorded(KwikPacketTimes.key(last, APP)));
    }

    @Test
    void takeAnswersAndForgetsAnAcksPacketsInOnePass() {
        List<PacketInfo> ack = new ArrayList<>();
        for (long pn = 0; pn < 20; pn++) {
            PacketInfo info = info(pn);
            if (pn != 7) { // packet 7 was never registered
                t.record(KwikPacketTimes.key(info.packet()), 1_000 + pn, pn == 9);
            }
            ack.add(info);
        }
        KwikPacketTimes.Taken taken = new KwikPacketTimes.Taken();
        assertEquals(16, taken.capacity());
        t.take(ack, taken);
        assertTrue(taken.capacity() >= 20, "larger arrays for a larger ACK");
        for (int i = 0; i < 20; i++) {
            assertEquals(i == 7 ? KwikPacketTimes.UNKNOWN : 1_000 + i, taken.at(i));
            assertEquals(i != 7 && i != 9, taken.rttSample(i), "packet " + i);
            assertEquals(KwikPacketTimes.UNKNOWN, t.recorded(KwikPacketTimes.key(i, APP)), "forgotten: " + i);
        }
        assertEquals(KwikPacketTimes.UNKNOWN, taken.at(20));
        int capacity = taken.capacity();
        t.take(ack.subList(0, 3), taken);
        assertEquals(capacity, taken.capacity(), "large enough arrays are reused");
        assertEquals(KwikPacketTimes.UNKNOWN, taken.at(3), "only this ACK's packets");
        assertFalse(taken.rttSample(3));
        taken.clear();
        assertEquals(KwikPacketTimes.UNKNOWN, taken.at(0));
    }

    @Test
    void spacesDoNotShareEntries() {
        for (int space = 0; space < 3; space++) {
            t.record(KwikPacketTimes.key(0, space), 100 + space, false);
        }
        for (int space = 0; space < 3; space++) {
            assertEquals(100 + space, t.recorded(KwikPacketTimes.key(0, space)));
        }
    }
}
