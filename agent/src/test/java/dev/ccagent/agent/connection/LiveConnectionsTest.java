package dev.ccagent.agent.connection;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.cc.CcSnapshot;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LiveConnectionsTest {

    /** A connection that records whether detach handed it over. */
    private static final class Fake implements LiveConnection {
        boolean switched;

        @Override
        public SendTelemetry telemetry() {
            return null;
        }

        @Override
        public String algorithm() {
            return "bbr1";
        }

        @Override
        public AgentConfig.Arm arm() {
            return null;
        }

        @Override
        public CcSnapshot snapshot(CcSnapshot into) {
            return into;
        }

        @Override
        public long getWindowSize() {
            return 0;
        }

        @Override
        public long getBytesInFlight() {
            return 0;
        }

        @Override
        public boolean switchToStock() {
            boolean first = !switched;
            switched = true;
            return first;
        }
    }

    @Test
    void aClosedConnectionLeavesAtItsCloseSoDetachCountsOnlyOpenOnes() {
        LiveConnections.detachAll(); // whatever another test left
        List<Fake> all = new ArrayList<>(); // held strongly: the registry's weak keys stay
        for (int i = 0; i < 10; i++) {
            Fake f = new Fake();
            all.add(f);
            LiveConnections.register(f);
        }
        for (int i = 0; i < 4; i++) {
            LiveConnections.closed(all.get(i));
        }
        assertEquals(6, LiveConnections.live().size(), "the open ones");
        assertEquals(6, LiveConnections.detachAll(), "detach hands over the 6 open connections, not the 4 closed");
        for (int i = 0; i < 10; i++) {
            if (i < 4) {
                assertFalse(all.get(i).switched, "closed " + i + " not touched");
            } else {
                assertTrue(all.get(i).switched, "open " + i + " handed over");
            }
        }
        assertEquals(0, LiveConnections.live().size(), "nothing held after detach");
    }
}
