package dev.ccagent.it.bench;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Reading what ngtcp2 0.12's example server wrote in its qlog (records as it wrote them). */
class Ngtcp2PeerTest {

    @Test
    void theQlogGivesTheRttEvery100MsAndTheLosses() {
        StringBuilder q = new StringBuilder("\u001e{\"qlog_format\":\"JSON-SEQ\",\"qlog_version\":\"0.3\"}\n");
        // smoothed RTT 40 ms until 1,000 ms, then 80 ms; an update every 10 ms up to 3,000 ms
        for (int t = 0; t <= 3000; t += 10) {
            q.append("\u001e{\"time\":").append(t).append(",\"name\":\"recovery:metrics_updated\",\"data\":{\"smoothed_rtt\":")
                    .append(t < 1000 ? 40 : 80).append(",\"latest_rtt\":41,\"congestion_window\":14520}}\n");
            if (t % 1000 == 500) {
                q.append("\u001e{\"time\":").append(t).append(",\"name\":\"recovery:packet_lost\",\"data\":{\"header\":"
                        + "{\"packet_type\":\"1RTT\",\"packet_number\":189}}}\n");
            }
        }
        Ngtcp2Peer.Qlog r = Ngtcp2Peer.readQlog(q.toString(), 1500);
        assertEquals(3, r.packetsLost);
        assertEquals(31, r.rttEvery100Ms.size(), "ticks 0, 100, ..., 3000 ms");
        assertEquals(10, r.rttEvery100Ms.stream().filter(v -> v == 40).count(), "0 to 900 ms");
        assertEquals(16, r.rttSteady.size(), "ticks 1500 to 3000 ms");
        assertTrue(r.rttSteady.stream().allMatch(v -> v == 80));
    }
}
