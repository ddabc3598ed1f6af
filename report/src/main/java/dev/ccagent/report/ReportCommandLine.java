package dev.ccagent.report;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The one entry point of the report module: {@code java -jar ccagent.jar report [--html FILE] [--json]
 * [--baseline ARM] [--seed N] FILE|DIR...}. The agent's CLI parses and documents the command (its
 * {@code --help}), then loads this module from the jar nested in ccagent.jar and calls {@link #run}
 * with the arguments after {@code report}. The caller flushes {@code out} and {@code err} when it returns.
 */
public final class ReportCommandLine {

    private ReportCommandLine() {
    }

    /**
     * Runs the report over the recordings {@code args} name; returns the exit status: 0 every input
     * read whole, 1 some input had a problem (one line each on {@code err}) or no connection was found
     * or the HTML page could not be written, 2 bad usage.
     */
    public static int run(String[] args, PrintWriter out, PrintWriter err) {
        FleetReport.Options options = new FleetReport.Options();
        List<Path> recordings = new ArrayList<>();
        Path html = null;
        boolean json = false;
        boolean optionsEnded = false;
        try {
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                if (optionsEnded || !a.startsWith("-") || a.equals("-")) {
                    recordings.add(Path.of(a));
                    continue;
                }
                String name = a;
                String value = null;
                int eq = a.indexOf('=');
                if (a.startsWith("--") && eq > 0) {
                    name = a.substring(0, eq);
                    value = a.substring(eq + 1);
                }
                switch (name) {
                    case "--":
                        optionsEnded = true;
                        break;
                    case "--json":
                        json = true;
                        break;
                    case "--html":
                        html = Path.of(value != null ? value : value(args, ++i, name));
                        break;
                    case "--baseline":
                        options.baseline = value != null ? value : value(args, ++i, name);
                        break;
                    case "--seed":
                        String seed = value != null ? value : value(args, ++i, name);
                        try {
                            options.seed = Long.parseLong(seed);
                        } catch (NumberFormatException e) {
                            throw new IllegalArgumentException("Invalid value for option '--seed': '" + seed
                                    + "' is not a long");
                        }
                        break;
                    default:
                        throw new IllegalArgumentException("Unknown option: '" + a + "'");
                }
            }
            if (recordings.isEmpty()) {
                throw new IllegalArgumentException("Missing required parameter: 'FILE|DIR'");
            }
        } catch (IllegalArgumentException e) { // InvalidPathException among them
            err.println(e.getMessage());
            err.println("Usage: ccagent report [--json] [--baseline=ARM] [--html=FILE] [--seed=N] FILE|DIR...");
            err.flush();
            return 2;
        }
        FleetReport report = FleetReport.read(recordings, options);
        out.print(json ? FleetOutput.json(report) : FleetOutput.text(report));
        if (html != null) {
            try {
                FleetHtml.write(report, html);
                if (!json) {
                    out.println("HTML report: " + html.toAbsolutePath());
                }
            } catch (IOException | RuntimeException e) {
                err.println("ccagent: cannot write " + html + ": " + e.getMessage());
                err.flush();
                return 1;
            }
        }
        // out is not flushed here (the caller does, at exit): as before the split, with both streams on one
        // terminal the problem lines come before a text report that ends without a println
        for (String line : FleetOutput.problemLines(report)) {
            err.println("ccagent: " + line);
        }
        if (report.connections() == 0) {
            err.println("ccagent: no connections found in the recordings");
        }
        err.flush();
        return report.exitStatus();
    }

    private static String value(String[] args, int i, String option) {
        if (i >= args.length) {
            throw new IllegalArgumentException("Missing required parameter for option '" + option + "'");
        }
        return args[i];
    }
}
