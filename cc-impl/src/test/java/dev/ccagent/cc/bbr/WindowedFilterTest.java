package dev.ccagent.cc.bbr;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class WindowedFilterTest {

    /** Feeds {@code f} the samples given as (sample, round) pairs, in order. */
    private static WindowedFilter fed(WindowedFilter f, long... sampleRoundPairs) {
        for (int i = 0; i < sampleRoundPairs.length; i += 2) {
            f.update(sampleRoundPairs[i], sampleRoundPairs[i + 1]);
        }
        return f;
    }

    /** Feeds {@code f} one more sample and checks the best it then reports. */
    private static void assertBestAfter(long expectedBest, WindowedFilter f, long sample, long round) {
        f.update(sample, round);
        assertEquals(expectedBest, f.best());
    }

    @Test
    void emptyFilterReportsZero() {
        WindowedFilter f = WindowedFilter.max(10);
        assertTrue(f.isEmpty());
        assertEquals(0, f.best());
    }

    @Test
    void maxFilterKeepsBestWithinWindow() {
        WindowedFilter f = fed(WindowedFilter.max(10), 100, 0, 50, 1, 70, 5);
        assertEquals(100, f.best());
        f.update(60, 10);
        assertEquals(100, f.best(), "best is exactly window-length old: still in the window");
    }

    @Test
    void maxFilterExpiresBestAndPromotesSuccessor() {
        // 100 is older than the window after the last sample, (40, 11)
        WindowedFilter f = fed(WindowedFilter.max(10), 100, 0, 80, 3, 60, 8, 40, 11);
        assertEquals(80, f.best());
        // Only three samples are kept: 60 (round 8) was never a successor candidate, so once 80
        // (round 3) expires the best is the newer 40.
        assertBestAfter(40, f, 30, 14);
        assertBestAfter(20, f, 20, 30); // everything old: the new sample is all there is
    }

    @Test
    void newBestReplacesEverything() {
        WindowedFilter f = fed(WindowedFilter.max(10), 10, 0, 5, 1, 20, 2);
        assertEquals(20, f.best());
        assertEquals(20, f.secondBest());
        assertEquals(20, f.thirdBest());
    }

    @Test
    void minFilterKeepsMinimum() {
        WindowedFilter f = fed(WindowedFilter.min(100), 50, 0, 70, 10, 40, 20, 90, 30);
        assertEquals(40, f.best());
        // nothing kept is younger than the window: start over from the new sample
        assertBestAfter(95, f, 95, 121);
    }

    @Test
    void decreasingSamplesTrackDownWithinAboutOneWindow() {
        WindowedFilter f = WindowedFilter.max(10);
        for (int round = 0; round < 100; round++) {
            f.update(1000 - round * 5L, round);
        }
        // the best can be at most one window (plus the quarter-window refresh) old
        assertTrue(f.best() <= 1000 - (99 - 11) * 5L, "best=" + f.best());
    }

    @Test
    void resetAndClear() {
        WindowedFilter f = fed(WindowedFilter.max(10), 100, 0);
        f.reset(7, 3);
        assertEquals(7, f.best());
        f.clear();
        assertTrue(f.isEmpty());
        assertBestAfter(3, f, 3, 4);
    }

    @Test
    void timeGoingBackwardsIsTreatedAsNow() {
        WindowedFilter f = fed(WindowedFilter.max(10), 100, 50, 200, 10);
        assertEquals(200, f.best());
        assertEquals(50, f.bestTime());
    }
}
