package dev.ccagent.it.netty;

import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The CPU spin monitor's poll checks of one run, read from its debug lines ("poll check at P% of a core while
 * sampled: K of the N stack samples that found it awake (...) were inside it, I of M in all"): how many, how many
 * knew the loop's sleeps from the kernel, the most samples any found in the poll, and the largest share of awake
 * samples in the poll (of checks with at least {@code minAwake} awake, those the monitor judges). What the
 * no-false-alarm tests print beside their witnesses.
 */
record PollChecks(int count, int byKernel, int judged, int maxInPoll, double maxAwakeInPoll) {

    private static final Pattern CHECK = Pattern.compile("poll check at (\\d+)% of a core while sampled: (\\d+) of the "
            + "(\\d+) stack samples that found it (awake \\([^)]*\\)|on a CPU) were inside it, (\\d+) of (\\d+) in all");

    static PollChecks of(List<String> lines, int minAwake) {
        int count = 0;
        int byKernel = 0;
        int judged = 0;
        int maxInPoll = 0;
        double maxShare = -1;
        for (String l : lines) {
            Matcher m = CHECK.matcher(l);
            if (m.find()) {
                count++;
                byKernel += m.group(4).startsWith("awake") ? 1 : 0;
                maxInPoll = Math.max(maxInPoll, Integer.parseInt(m.group(5)));
                int awake = Integer.parseInt(m.group(3));
                if (awake >= minAwake) {
                    judged++;
                    maxShare = Math.max(maxShare, Integer.parseInt(m.group(2)) / (double) awake);
                }
            }
        }
        return new PollChecks(count, byKernel, judged, maxInPoll, maxShare);
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "%d poll checks (%d by the kernel's count of sleeps, %d with enough samples "
                + "awake to judge), at most %d of 24 samples in the poll, at most %.2f of the samples awake in the poll",
                count, byKernel, judged, maxInPoll, maxAwakeInPoll);
    }

    /** Linux: each check knows the loop's sleeps (the kernel counts them); elsewhere its CPU time alone judges. */
    static boolean kernelCountsSleeps() {
        return java.nio.file.Files.isDirectory(java.nio.file.Path.of("/proc/thread-self/"));
    }
}
