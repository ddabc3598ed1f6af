package dev.ccagent.it.netty;

import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The CPU spin monitor's poll checks of one run, read from its debug lines ("N of M stack samples in its poll at
 * P% of a core while sampled: X of a core inside the poll"): how many, the most samples any found in the poll and
 * the largest estimate of a core burned there. What the no-false-alarm tests print beside their witnesses.
 */
record PollChecks(int count, int maxInPoll, double maxCore) {

    private static final Pattern CHECK = Pattern.compile("(\\d+) of (\\d+) stack samples in its poll at (\\d+)% of a core "
            + "while sampled: (-?[0-9.]+) of a core inside the poll");

    static PollChecks of(List<String> lines) {
        int count = 0;
        int maxInPoll = 0;
        double maxCore = -1;
        for (String l : lines) {
            Matcher m = CHECK.matcher(l);
            if (m.find()) {
                count++;
                maxInPoll = Math.max(maxInPoll, Integer.parseInt(m.group(1)));
                maxCore = Math.max(maxCore, Double.parseDouble(m.group(4)));
            }
        }
        return new PollChecks(count, maxInPoll, maxCore);
    }
}
