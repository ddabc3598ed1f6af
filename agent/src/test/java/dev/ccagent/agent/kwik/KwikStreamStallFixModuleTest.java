package dev.ccagent.agent.kwik;

import dev.ccagent.agent.instrument.Requirement;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Where the stream-stall fix (on by default) applies: only to a {@code scheduleSendStreamFrameRequest}
 * that reads {@code sendRequestsQueued}, queues the request and then increments, once each.
 */
class KwikStreamStallFixModuleTest {

    /** kwik 0.10.9's own class file, from the class path (as javap shows it). */
    @Test
    void kwik0109HasTheRacyOrder() {
        List<String> missing = Requirement.missingIn(List.of(KwikStreamStallFixModule.RACE),
                KwikStreamStallFixModuleTest.class.getClassLoader());
        assertEquals(List.of(), missing);
    }

    @Test
    void aLoaderWithoutKwikLacksTheClass() {
        List<String> missing = Requirement.missingIn(List.of(KwikStreamStallFixModule.RACE),
                ClassLoader.getPlatformClassLoader());
        assertEquals(1, missing.size(), missing.toString());
        assertTrue(missing.get(0).contains("StreamOutputStreamImpl not found"), missing.toString());
    }

    @Test
    void theOrderOf0107To0109Fits() {
        assertNull(KwikStreamStallFixModule.racyOrder(racy()));
    }

    @Test
    void countingBeforeQueueingIsNotTheRace() {
        List<String> steps = new ArrayList<>(List.of(KwikStreamStallFixModule.COUNTER, KwikStreamStallFixModule.READ,
                KwikStreamStallFixModule.COUNTER, KwikStreamStallFixModule.COUNT, queue()));
        String problem = KwikStreamStallFixModule.racyOrder(steps);
        assertNotNull(problem);
        assertTrue(problem.contains("does not queue the send request between"), problem);
    }

    @Test
    void aSecondReadWouldAlsoBeSubstitutedSoItDoesNotFit() {
        List<String> steps = racy();
        steps.add(KwikStreamStallFixModule.COUNTER);
        steps.add(KwikStreamStallFixModule.READ);
        assertTrue(KwikStreamStallFixModule.racyOrder(steps).contains("once each"));
    }

    @Test
    void anotherCounterDoesNotFit() {
        List<String> steps = racy();
        steps.set(0, "getfield tech/kwik/core/stream/StreamOutputStreamImpl.somethingElse");
        assertTrue(KwikStreamStallFixModule.racyOrder(steps).contains("not on sendRequestsQueued"));
    }

    @Test
    void noCounterAtAllDoesNotFit() {
        assertNotNull(KwikStreamStallFixModule.racyOrder(List.of(queue())));
    }

    private static List<String> racy() {
        return new ArrayList<>(List.of(KwikStreamStallFixModule.COUNTER, KwikStreamStallFixModule.READ,
                "getfield tech/kwik/core/stream/StreamOutputStreamImpl.quicStream", queue(),
                KwikStreamStallFixModule.COUNTER, KwikStreamStallFixModule.COUNT));
    }

    private static String queue() {
        return KwikStreamStallFixModule.QUEUE + "(Ljava/util/function/Function;ILtech/kwik/core/common/EncryptionLevel;"
                + "Ljava/util/function/Consumer;Z)V";
    }
}
