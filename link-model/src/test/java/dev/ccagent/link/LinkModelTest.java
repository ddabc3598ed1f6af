package dev.ccagent.link;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LinkModelTest {

    @Test
    void defaultsDescribeATransparentDirection() {
        LinkModel m = LinkModel.builder().build();
        assertEquals(0, m.rateBitsPerSecond());
        assertEquals(0, m.delayNanos());
        assertEquals(0.0, m.lossProbability());
        assertSame(GilbertElliott.NONE, m.burstLoss());
        assertFalse(m.burstLoss().losesPackets());
        assertEquals(Long.MAX_VALUE, m.bufferBytes());
        assertTrue(m.rateChanges().isEmpty());
    }

    @Test
    void rateScheduleIsSortedStablyAndFollowedByRateAt() {
        LinkModel m = LinkModel.builder().rate(10_000_000)
                .rateChange(20, 2_000_000).rateChange(10, 5_000_000).rateChange(20, 3_000_000).build();
        assertEquals(10, m.rateChanges().get(0).atNanos);
        assertEquals(2_000_000, m.rateChanges().get(1).bitsPerSecond, "equal times keep the order they came in");
        assertEquals(3_000_000, m.rateChanges().get(2).bitsPerSecond);
        assertEquals(10_000_000, m.rateAt(9));
        assertEquals(5_000_000, m.rateAt(10));
        assertEquals(3_000_000, m.rateAt(20), "the last change at a time wins");
        assertThrows(UnsupportedOperationException.class, () -> m.rateChanges().clear());
    }

    @Test
    void holdsDelayLossBurstLossAndBuffer() {
        LinkModel m = LinkModel.builder().rate(1_000_000).delay(25_000_000).loss(0.01)
                .burstLoss(0.02, 0.3, 0.5).buffer(64 * 1024).build();
        assertEquals(25_000_000, m.delayNanos());
        assertEquals(0.01, m.lossProbability());
        assertEquals(0.02, m.burstLoss().goodToBad);
        assertEquals(0.3, m.burstLoss().badToGood);
        assertEquals(0.5, m.burstLoss().lossInBad);
        assertTrue(m.burstLoss().losesPackets());
        assertEquals(64 * 1024, m.bufferBytes());
    }

    @Test
    void rejectsValuesOutsideTheirRange() {
        assertThrows(IllegalArgumentException.class, () -> LinkModel.builder().rate(-1));
        assertThrows(IllegalArgumentException.class, () -> LinkModel.builder().delay(-1));
        assertThrows(IllegalArgumentException.class, () -> LinkModel.builder().loss(1.0));
        assertThrows(IllegalArgumentException.class, () -> LinkModel.builder().buffer(0));
        assertThrows(IllegalArgumentException.class, () -> LinkModel.builder().rateChange(-1, 1000));
        assertThrows(IllegalArgumentException.class, () -> LinkModel.builder().rateChange(0, 0));
        assertThrows(IllegalArgumentException.class, () -> new GilbertElliott(0.1, 0, 0.5));
        assertThrows(IllegalArgumentException.class, () -> new GilbertElliott(1.5, 0.5, 0.5));
    }
}
