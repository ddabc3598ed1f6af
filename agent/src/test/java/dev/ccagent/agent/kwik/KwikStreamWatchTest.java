package dev.ccagent.agent.kwik;

import dev.ccagent.agent.detect.StreamStallMonitor;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the stream-stall watch reads of kwik: every member exists in kwik 0.10.9 as released (the class
 * files on the test class path; a renamed member in a later kwik fails here first), and the stall
 * predicate's branches, on object graphs shaped as kwik's (the same member names; the watch reads by
 * name): data with no request and nothing in flight is a stall; a queued request, data in flight, a
 * flow-control block, a reset or a closing connection is not; 0.10.3/0.10.4's flag counts as the counter.
 */
class KwikStreamWatchTest {

    /** Every member the watch reads below the connection, on kwik 0.10.9's own classes. */
    @Test
    void kwik0109HasEveryMemberTheWatchReads() throws Exception {
        String[][] members = {
                {"send.SenderImpl", "connection", "recoveryManager"},
                {"recovery.RecoveryManager", "lossDetectors"},
                {"recovery.LossDetector", "ackElicitingInFlight"},
                {"stream.StreamManager", "streams"},
                {"stream.QuicStreamImpl", "outputStream", "streamId"},
                {"stream.StreamOutputStreamImpl", "sendBuffer", "retransmitBuffer", "currentOffset", "sendRequestsQueued",
                        "reset", "aborted", "flowController"},
                {"stream.SendBuffer", "sendQueue", "bufferedBytes", "blockingWriterThread"},
                {"stream.RetransmitBuffer", "data"},
        };
        ClassLoader loader = getClass().getClassLoader();
        for (String[] m : members) {
            Class<?> type = Class.forName("tech.kwik.core." + m[0], false, loader);
            for (int i = 1; i < m.length; i++) {
                assertNotNull(KwikStreamWatch.field(type, m[i]), m[0] + "." + m[i]);
            }
        }
        // QuicConnectionImpl's connectionState and getStreamManager() are not reflected on here: the JVM cannot
        // without kwik's TLS library (agent15), which this class path leaves out; KwikStreamStallTest reads them live
        assertNotNull(KwikStreamWatch.method(Class.forName("tech.kwik.core.send.SenderImpl", false, loader), "getPto", 0));
        assertNotNull(KwikStreamWatch.method(Class.forName("tech.kwik.core.stream.FlowControl", false, loader),
                "getFlowControlLimit", 1));
    }

    // ---- object graphs shaped as kwik's ----

    enum Status { Connected, Closing }

    static final class SendBuffer {
        final Object END_OF_STREAM_MARKER = java.nio.ByteBuffer.allocate(0);
        final Queue<Object> sendQueue = new ConcurrentLinkedDeque<>();
        final AtomicInteger bufferedBytes = new AtomicInteger();
        volatile Thread blockingWriterThread;
    }

    static final class RetransmitBuffer {
        final Queue<Object> data = new ConcurrentLinkedQueue<>();
    }

    static final class FlowControl {
        long limit = 1_000_000;

        long getFlowControlLimit(Object stream) {
            return limit;
        }
    }

    static final class Output {
        final SendBuffer sendBuffer = new SendBuffer();
        final RetransmitBuffer retransmitBuffer = new RetransmitBuffer();
        long currentOffset = 1200;
        final AtomicInteger sendRequestsQueued = new AtomicInteger();
        volatile boolean reset;
        volatile boolean aborted;
        final FlowControl flowController = new FlowControl();
    }

    /** kwik 0.10.0-0.10.4: a flag instead of the counter. */
    static final class OldOutput {
        final SendBuffer sendBuffer = new SendBuffer();
        final RetransmitBuffer retransmitBuffer = new RetransmitBuffer();
        long currentOffset = 1200;
        volatile boolean sendRequestQueued;
        volatile boolean reset;
        volatile boolean aborted;
        final FlowControl flowController = new FlowControl();
    }

    /** A receive-only stream's output (kwik's NullStreamOutputStream): no buffer. */
    static final class NullOutput {
    }

    static final class Stream {
        final Object outputStream;
        final int streamId;

        Stream(int id, Object out) {
            this.streamId = id;
            this.outputStream = out;
        }
    }

    static final class StreamManager {
        final Map<Integer, Stream> streams = new ConcurrentHashMap<>();
    }

    static final class Connection {
        volatile Status connectionState = Status.Connected;
        final StreamManager manager = new StreamManager();

        StreamManager getStreamManager() {
            return manager;
        }
    }

    static final class LossDetector {
        final AtomicInteger ackElicitingInFlight = new AtomicInteger();
    }

    static final class RecoveryManager {
        final LossDetector[] lossDetectors = {new LossDetector(), new LossDetector(), new LossDetector()};
    }

    static final class Sender {
        final Connection connection = new Connection();
        final RecoveryManager recoveryManager = new RecoveryManager();

        public int getPto() {
            return 40;
        }
    }

    static Output stuck(Sender s, int id) {
        Output out = new Output();
        out.sendBuffer.sendQueue.add("31 KB");
        out.sendBuffer.bufferedBytes.set(31_000);
        s.connection.manager.streams.put(id, new Stream(id, out));
        return out;
    }

    static List<String> read(Sender s) throws Exception {
        List<String> seen = new ArrayList<>();
        KwikStreamWatch.sender(s, "0a0b", new StreamStallMonitor.Reading(), r -> seen.add(r.stalled
                ? "stalled " + r.streamId + " " + r.bytesWaiting + "@" + r.offset + " pto " + r.ptoNanos / 1_000_000 + " ms"
                + (r.writerBlocked ? " writer blocked" : "") + (r.retransmitPending ? " resend" : "") + " on " + r.connectionId
                : r.hidden ? "hidden " + r.bytesWaiting + "@" + r.offset : r.closed ? "closed" : "fine"));
        return seen;
    }

    @Test
    void dataWithNoRequestAndNothingInFlightIsAStall() throws Exception {
        Sender s = new Sender();
        Output out = stuck(s, 0);
        out.sendBuffer.blockingWriterThread = Thread.currentThread();
        assertEquals(List.of("stalled 0 31000@1200 pto 40 ms writer blocked on 0a0b"), read(s));
        out.retransmitBuffer.data.add("frame");
        out.sendBuffer.sendQueue.clear();
        out.sendBuffer.bufferedBytes.set(0);
        assertEquals(List.of("stalled 0 0@1200 pto 40 ms writer blocked resend on 0a0b"), read(s),
                "lost data to resend counts as more to send");
        out.retransmitBuffer.data.clear();
        out.sendBuffer.sendQueue.add(out.sendBuffer.END_OF_STREAM_MARKER);
        out.flowController.limit = 1200;
        assertTrue(read(s).get(0).startsWith("stalled 0 0@1200"), "a FIN alone, sent whatever the limit: " + read(s));
    }

    @Test
    void aQueuedRequestOrNothingToSendIsFineDataInFlightOrAFlowControlBlockHidesItAResetClosesIt() throws Exception {
        Sender s = new Sender();
        Output out = stuck(s, 0);
        out.sendRequestsQueued.set(1);
        assertEquals(List.of("fine"), read(s), "a request is queued");
        out.sendRequestsQueued.set(-1);
        assertTrue(read(s).get(0).startsWith("stalled"), "-1: the request was taken and not replaced (the race)");
        out.sendRequestsQueued.set(0);
        s.recoveryManager.lossDetectors[2].ackElicitingInFlight.set(1);
        assertEquals(List.of("hidden 31000@1200"), read(s), "in flight: kwik's loss timer is armed");
        s.recoveryManager.lossDetectors[2].ackElicitingInFlight.set(0);
        out.flowController.limit = 1200;
        assertEquals(List.of("hidden 31000@1200"), read(s), "new data blocked by flow control at its offset");
        out.retransmitBuffer.data.add("frame");
        assertTrue(read(s).get(0).startsWith("stalled"), "lost data is resent whatever the limit: " + read(s));
        out.retransmitBuffer.data.clear();
        out.flowController.limit = 1_000_000;
        out.reset = true;
        assertEquals(List.of("closed"), read(s), "reset");
        out.reset = false;
        out.sendBuffer.sendQueue.clear();
        out.sendBuffer.bufferedBytes.set(0);
        assertEquals(List.of("fine"), read(s), "nothing to send");
        out.sendBuffer.sendQueue.add(java.nio.ByteBuffer.allocate(0)); // a zero-length write: no data, no FIN
        assertEquals(List.of("fine"), read(s), "an empty write is nothing to send");
    }

    @Test
    void aClosingConnectionReportsNoStreamsAndReceiveOnlyStreamsAreSkipped() throws Exception {
        Sender s = new Sender();
        stuck(s, 0);
        s.connection.manager.streams.put(3, new Stream(3, new NullOutput()));
        assertEquals(1, read(s).size(), "the receive-only stream is not reported");
        s.connection.connectionState = Status.Closing;
        assertEquals(List.of(), read(s), "closing: not seen, so its episodes end as closed");
    }

    @Test
    void kwik0104sFlagCountsAsTheCounter() throws Exception {
        Sender s = new Sender();
        OldOutput out = new OldOutput();
        out.sendBuffer.sendQueue.add("data");
        out.sendBuffer.bufferedBytes.set(100);
        s.connection.manager.streams.put(4, new Stream(4, out));
        assertTrue(read(s).get(0).startsWith("stalled 4 100@1200"), read(s).toString());
        out.sendRequestQueued = true;
        assertEquals(List.of("fine"), read(s));
        assertFalse(dev.ccagent.agent.instrument.Transformed.in(KwikStreamWatch.STREAM_OUTPUT,
                OldOutput.class.getClassLoader()), "never transformed here");
    }
}
