package dev.ccagent.it;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The per-arm series ({@code ccagent_arm_*}) in what the Prometheus exporter serves. */
public final class ArmSeries {

    private static final Pattern SERIES = Pattern.compile(
            "^(ccagent_arm_\\w+?)(?:_total)?\\{([^}]*)}\\s+([-+0-9.eE]+|NaN)\\s*$");

    private ArmSeries() {
    }

    /**
     * Each per-arm series of an exposition {@code body} to its value, as {@code name{labels}}: the name without
     * {@code _total}, the labels sorted.
     */
    public static Map<String, Double> parse(String body) {
        Map<String, Double> out = new TreeMap<>();
        for (String line : body.split("\n")) {
            Matcher m = SERIES.matcher(line);
            if (m.find()) {
                List<String> labels = new ArrayList<>(List.of(m.group(2).split(",")));
                labels.removeIf(String::isBlank);
                labels.sort(null);
                out.put(m.group(1) + "{" + String.join(",", labels) + "}", Double.parseDouble(m.group(3)));
            }
        }
        return out;
    }
}
