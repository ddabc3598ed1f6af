package dev.ccagent.cc.bbr;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class WindowedFilterTest {

    @Test
    void emptyFilterReportsZero() {
        WindowedFilter f = WindowedFilter.max(10);
        assertTrue(f.isEmpty());
        assertEquals(0, f.best());
    }

    @Test
    void maxFilterKeepsBestWithinWindow() {
        WindowedFilter f = WindowedFilter.max(10);
        f.update(100, 0);
        f.update(50, 1);
        f.update(70, 5);
        assertEquals(100, f.best());
        f.update(60, 10);
        assertEquals(100, f.best(), "best is exactly window-length old: still in the window");
    }

    @Test
    void maxFilterExpiresBestAndPromotesSuccessor() {
        WindowedFilter f = WindowedFilter.max(10);
        f.update(100, 0);
        f.update(80, 3);
        f.update(60, 8);
        f.update(40, 11); // 100 is older than the window now
        assertEquals(80, f.best());
        // Only three samples are kept: 60 (round 8) was never a successor candidate, so once 80
        // (round 3) expires the best is the newer 40.
        f.update(30, 14);
        assertEquals(40, f.best());
        f.update(20, 30); // everything old: the new sample is all there is
        assertEquals(20, f.best());
    }

    @Test
    void newBestReplacesEverything() {
        WindowedFilter f = WindowedFilter.max(10);
        f.update(10, 0);
        f.update(5, 1);
        f.update(20, 2);
        assertEquals(20, f.best());
        assertEquals(20, f.secondBest());
        assertEquals(20, f.thirdBest());
    }

    @Test
    void minFilterKeepsMinimum() {
        WindowedFilter f = WindowedFilter.min(100);
        f.update(50, 0);
        f.update(70, 10);
        f.update(40, 20);
        f.update(90, 30);
        assertEquals(40, f.best());
        // nothing kept is younger than the window: start over from the new sample
        f.update(95, 121);
        assertEquals(95, f.best());
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
        WindowedFilter f = WindowedFilter.max(10);
        f.update(100, 0);
        f.reset(7, 3);
        assertEquals(7, f.best());
        f.clear();
        assertTrue(f.isEmpty());
        f.update(3, 4);
        assertEquals(3, f.best());
    }

    @Test
    void timeGoingBackwardsIsTreatedAsNow() {
        WindowedFilter f = WindowedFilter.max(10);
        f.update(100, 50);
        f.update(200, 10);
        assertEquals(200, f.best());
        assertEquals(50, f.bestTime());
    }
}
