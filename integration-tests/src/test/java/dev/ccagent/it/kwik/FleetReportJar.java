package dev.ccagent.it.kwik;

import java.lang.reflect.Field;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The fleet report ({@code FleetReport.read}) of the very jar under test: the report jar nested in
 * ccagent.jar, loaded by the jar's own {@code ReportJar.loader()} (through {@link AgentJar}'s isolated
 * class loader) and read by reflection: the same code the {@code report} command runs, never the report
 * module's classes on this test's class path.
 */
final class FleetReportJar {

    /** One metric of one canary arm against the baseline. */
    static final class Verdict {
        final String arm;
        final String baseline;
        final String metric;
        final String verdict;
        final int nArm;
        final int nBaseline;
        final double medianArm;
        final double medianBaseline;
        final double ciLow;
        final double ciHigh;
        final double p;

        Verdict(String arm, String baseline, Object c) throws ReflectiveOperationException {
            this.arm = arm;
            this.baseline = baseline;
            metric = (String) get(c, "metric");
            verdict = (String) get(get(c, "verdict"), "text");
            nArm = (int) get(c, "nArm");
            nBaseline = (int) get(c, "nBaseline");
            medianArm = (double) get(c, "medianArm");
            medianBaseline = (double) get(c, "medianBaseline");
            Object interval = get(c, "interval");
            ciLow = interval == null ? Double.NaN : (double) get(interval, "low");
            ciHigh = interval == null ? Double.NaN : (double) get(interval, "high");
            p = (double) get(get(c, "test"), "p");
        }

        @Override
        public String toString() {
            return String.format("%s vs %s %s: %s (n %d/%d, medians %.4g/%.4g, ratio CI [%.3f, %.3f], p %.3g)", arm,
                    baseline, metric, verdict, nArm, nBaseline, medianArm, medianBaseline, ciLow, ciHigh, p);
        }
    }

    final List<Verdict> verdicts = new ArrayList<>();
    /** Arm name ("default stock") -> its ascending per-connection goodput (bit/s). */
    final Map<String, double[]> goodput = new java.util.TreeMap<>();
    /** Arm name -> connections. */
    final Map<String, Integer> connections = new java.util.TreeMap<>();
    final String baseline;

    private FleetReportJar(Object report) throws ReflectiveOperationException {
        Object base = report.getClass().getMethod("baseline").invoke(report);
        baseline = base == null ? null : (String) get(base, "name");
        for (Object arm : ((Map<?, ?>) report.getClass().getMethod("arms").invoke(report)).values()) {
            goodput.put((String) get(arm, "name"), (double[]) get(arm, "goodput"));
            connections.put((String) get(arm, "name"), (int) get(arm, "connections"));
        }
        for (Object ac : (List<?>) report.getClass().getMethod("comparisons").invoke(report)) {
            String arm = (String) get(get(ac, "arm"), "name");
            String againt = (String) get(get(ac, "baseline"), "name");
            for (Object c : (List<?>) get(ac, "metrics")) {
                verdicts.add(new Verdict(arm, againt, c));
            }
        }
    }

    /** {@code FleetReport.read(files, options with seed)} of the jar under test. */
    static FleetReportJar read(List<Path> files, long seed) throws Exception {
        ClassLoader l = (ClassLoader) AgentJar.loader().loadClass("dev.ccagent.agent.cli.ReportJar")
                .getMethod("loader").invoke(null);
        Class<?> fleet = l.loadClass("dev.ccagent.report.FleetReport");
        Class<?> optionsClass = l.loadClass("dev.ccagent.report.FleetReport$Options");
        Object options = optionsClass.getConstructor().newInstance();
        optionsClass.getField("seed").setLong(options, seed);
        Object report = fleet.getMethod("read", List.class, optionsClass).invoke(null, files, options);
        return new FleetReportJar(report);
    }

    /** The verdict of {@code metric} for {@code arm} (exactly one). */
    Verdict verdict(String arm, String metric) {
        Verdict found = null;
        for (Verdict v : verdicts) {
            if (v.arm.equals(arm) && v.metric.equals(metric)) {
                if (found != null) {
                    throw new AssertionError("two comparisons of " + arm + " " + metric + ": " + verdicts);
                }
                found = v;
            }
        }
        if (found == null) {
            throw new AssertionError("no comparison of " + arm + " " + metric + " among " + verdicts);
        }
        return found;
    }

    /** A public field of the report's object, or a record's component through its accessor. */
    private static Object get(Object o, String name) throws ReflectiveOperationException {
        Class<?> c = o.getClass();
        if (c.isRecord()) {
            return c.getMethod(name).invoke(o);
        }
        Field f = c.getField(name);
        return f.get(o);
    }
}
