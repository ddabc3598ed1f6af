package dev.ccagent.agent.kwik;

import dev.ccagent.agent.config.AgentArgs;
import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.runtime.AgentRuntime;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * Choosing counts nothing; a connection is counted under its arm only once it runs it, and as what ran
 * when kwik's controller runs instead (issue #34, item 8). The whole path, with a real failed swap, is
 * {@code KwikFailedSwapTest}.
 */
class KwikConnectionSelectorTest {

    private static long count(String key) {
        Map<String, Long> counts = AgentRuntime.connectionCounts();
        return counts.getOrDefault(key, 0L);
    }

    @Test
    void aChoiceIsCountedOnlyAsWhatTheConnectionRuns() {
        AgentConfig config = AgentArgs.parse("cc=bbr1;log=off").config();
        KwikConnectionSelector selector = new KwikConnectionSelector(config, "server");
        long arm = count("kwik default:bbr1");
        long instead = count("kwik default:bbr1 ran stock (swap failed)");

        KwikConnectionSelector.Choice c = selector.choose(new byte[] {1, 2, 3, 4}, 1252);
        assertNotNull(c.controller);
        assertEquals(arm, count("kwik default:bbr1"), "choosing counts nothing");

        selector.runsStockInstead(c, "swap failed", new IllegalStateException("test"), false);
        assertEquals(arm, count("kwik default:bbr1"), "not under the arm");
        assertEquals(instead + 1, count("kwik default:bbr1 ran stock (swap failed)"));

        selector.runs(selector.choose(new byte[] {5, 6, 7, 8}, 1252));
        assertEquals(arm + 1, count("kwik default:bbr1"));
    }

    @Test
    void aStockArmThatRunsStockIsCountedUnderItsArm() {
        AgentConfig config = AgentArgs.parse("cc=stock;detect=on;log=off").config();
        KwikConnectionSelector selector = new KwikConnectionSelector(config, "server");
        long arm = count("kwik default:stock");
        KwikConnectionSelector.Choice c = selector.choose(new byte[] {9}, 1252);
        selector.runsStockInstead(c, "injection failed", new IllegalStateException("test"), true);
        assertEquals(arm + 1, count("kwik default:stock"));
    }
}
