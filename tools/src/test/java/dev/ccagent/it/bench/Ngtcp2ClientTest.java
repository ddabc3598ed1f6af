package dev.ccagent.it.bench;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Reading what ngtcp2 0.12's example client wrote (lines as it wrote them, shortened). */
class Ngtcp2ClientTest {

    private static final String C = "I%08d 0x444914c1c1c488bc50581a0b3fe1e7a52b ";

    @Test
    void aTransferRunsFromTheRequestFrameToTheStreamsClose() {
        List<String> log = List.of(
                String.format(C, 0) + "pkt tx pkn=0 dcid=0x8c4db1a5 scid=0x444914c1 version=0x00000001 type=Initial len=0",
                "Sent packet: local=[127.0.0.1]:44376 remote=[127.0.0.1]:4433 ecn=0x2 1200 bytes",
                String.format(C, 42) + "pkt rx pkn=0 dcid=0x444914c1 scid=0x584aa837290d08b56eebb4231479e2123893 "
                        + "version=0x00000001 type=Initial len=119",
                String.format(C, 42) + "frm rx 0 1RTT STREAM(0x0a) id=0x3 fin=0 offset=0 len=18 uni=1",
                String.format(C, 83) + "frm tx 0 1RTT STREAM(0x0a) id=0x2 fin=0 offset=0 len=18 uni=1",
                String.format(C, 83) + "frm tx 0 1RTT STREAM(0x0b) id=0x0 fin=1 offset=0 len=15 uni=0",
                String.format(C, 130) + "frm tx 2 1RTT STREAM(0x0b) id=0x0 fin=1 offset=0 len=15 uni=0",
                String.format(C, 4083) + "frm rx 2215 1RTT STREAM(0x0f) id=0x0 fin=1 offset=2999114 len=905 uni=0",
                "HTTP stream 0 closed with error code 256",
                String.format(C, 4090) + "frm tx 219 1RTT CONNECTION_CLOSE(0x1d) error_code=(unknown)(0x100)");
        Ngtcp2Client.Transfer t = new Ngtcp2Client.Transfer();
        Ngtcp2Client.readLog(log, t);
        assertEquals(4.000, t.seconds, 1e-9, "the first request frame (83 ms) to the close (4083 ms)");
        assertEquals("584aa837290d08b56eebb4231479e2123893", t.serverCid, "the server's id from its Initial");
        assertEquals("8c4db1a5", t.odcid, "the client's first destination id");
    }

    @Test
    void aLogWithoutTheStreamsCloseHasNoTime() {
        Ngtcp2Client.Transfer t = new Ngtcp2Client.Transfer();
        Ngtcp2Client.readLog(List.of(String.format(C, 83) + "frm tx 0 1RTT STREAM(0x0b) id=0x0 fin=1 offset=0 len=15 uni=0",
                "E00000000 idle timeout"), t);
        assertTrue(Double.isNaN(t.seconds));
        assertNull(t.serverCid);
    }
}
