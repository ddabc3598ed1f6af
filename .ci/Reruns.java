import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * Prints every test that Surefire ran more than once, read from the XML reports under the given root:
 * those that passed only on a rerun (flakyFailure / flakyError) and those that failed every run
 * (rerunFailure / rerunError), each with its first failure's message. Run by .ci/run after the build,
 * whatever the build's outcome; it never changes that outcome (exit status 0 unless it cannot read).
 *
 * <p>{@code java .ci/Reruns.java [ROOT]} (Java 11+ source launch; ROOT defaults to the working directory).
 */
public class Reruns {

    public static void main(String[] args) throws Exception {
        Path root = Paths.get(args.length > 0 ? args[0] : ".");
        List<Path> reports;
        try (Stream<Path> s = Files.walk(root)) {
            reports = s.filter(p -> p.getFileName().toString().startsWith("TEST-")
                            && p.getFileName().toString().endsWith(".xml")
                            && p.getParent() != null
                            && p.getParent().getFileName().toString().equals("surefire-reports"))
                    .sorted()
                    .collect(Collectors.toList());
        }
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setExpandEntityReferences(false);
        f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        List<String> passedOnRerun = new ArrayList<>();
        List<String> failedEveryRun = new ArrayList<>();
        int unreadable = 0;
        for (Path report : reports) {
            NodeList cases;
            try {
                cases = f.newDocumentBuilder().parse(report.toFile()).getElementsByTagName("testcase");
            } catch (IOException | org.xml.sax.SAXException e) {
                System.out.println("reruns: cannot read " + report + ": " + e.getMessage());
                unreadable++;
                continue;
            }
            for (int i = 0; i < cases.getLength(); i++) {
                Element tc = (Element) cases.item(i);
                String name = tc.getAttribute("classname") + "." + tc.getAttribute("name");
                List<Element> flaky = children(tc, "flakyFailure", "flakyError");
                List<Element> rerun = children(tc, "rerunFailure", "rerunError");
                if (!flaky.isEmpty()) {
                    passedOnRerun.add(name + ": passed on run " + (flaky.size() + 1) + "; first failure: "
                            + describe(flaky.get(0)));
                } else if (!rerun.isEmpty()) {
                    List<Element> first = children(tc, "failure", "error");
                    failedEveryRun.add(name + ": failed " + (rerun.size() + 1) + " runs; first failure: "
                            + describe(first.isEmpty() ? rerun.get(0) : first.get(0)));
                }
            }
        }
        System.out.println();
        System.out.println("== reruns (" + reports.size() + " Surefire reports read) ==");
        if (passedOnRerun.isEmpty() && failedEveryRun.isEmpty()) {
            System.out.println("no test was rerun");
        }
        for (String line : passedOnRerun) {
            System.out.println("PASSED ONLY ON A RERUN (a defect; list it in docs/testing.md): " + line);
        }
        for (String line : failedEveryRun) {
            System.out.println("FAILED ON EVERY RUN: " + line);
        }
        System.exit(unreadable == 0 ? 0 : 1);
    }

    private static List<Element> children(Element parent, String... names) {
        List<Element> out = new ArrayList<>();
        for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element) {
                for (String name : names) {
                    if (name.equals(((Element) n).getTagName())) {
                        out.add((Element) n);
                    }
                }
            }
        }
        return out;
    }

    private static String describe(Element failure) {
        String msg = failure.getAttribute("message");
        if (msg.isEmpty()) {
            msg = failure.getAttribute("type");
        }
        msg = msg.replaceAll("\\s+", " ").trim();
        return msg.length() > 400 ? msg.substring(0, 400) + " ..." : msg;
    }
}
