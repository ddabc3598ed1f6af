package dev.ccagent.report;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Which arm the canary arms are compared with: the one {@code --baseline} names (by arm name, "default
 * stock", or by label, "default"), else the one arm labelled "default"; or why there is none.
 */
final class BaselineChoice {

    /** Null when there is no baseline. */
    final FleetReport.Arm arm;
    /** Why there is no baseline (null when there is one). */
    final String problem;

    private BaselineChoice(FleetReport.Arm arm, String problem) {
        this.arm = arm;
        this.problem = problem;
    }

    /** The baseline among {@code arms}; {@code requested} is the --baseline value (null: the "default" arm). */
    static BaselineChoice of(Map<String, FleetReport.Arm> arms, String requested) {
        if (arms.isEmpty()) {
            return new BaselineChoice(null, "no connections");
        }
        if (requested != null) {
            FleetReport.Arm byName = arms.get(requested);
            List<FleetReport.Arm> byLabel = arms.values().stream().filter(a -> a.label.equals(requested))
                    .collect(Collectors.toList());
            if (byName != null) {
                return new BaselineChoice(byName, null);
            }
            if (byLabel.size() == 1) {
                return new BaselineChoice(byLabel.get(0), null);
            }
            return new BaselineChoice(null, "--baseline " + requested + " names " + (byLabel.isEmpty() ? "no arm"
                    : byLabel.size() + " arms") + "; arms: " + String.join(", ", arms.keySet()));
        }
        List<FleetReport.Arm> defaults = arms.values().stream().filter(a -> a.label.equals("default"))
                .collect(Collectors.toList());
        if (defaults.size() == 1) {
            return new BaselineChoice(defaults.get(0), null);
        }
        if (defaults.isEmpty()) {
            return new BaselineChoice(null, "no arm labelled 'default'; name the baseline with --baseline ARM (arms: "
                    + String.join(", ", arms.keySet()) + ")");
        }
        return new BaselineChoice(null, "several 'default' arms (" + defaults.stream().map(a -> a.name)
                .collect(Collectors.joining(", ")) + "): name the baseline with --baseline ARM");
    }
}
