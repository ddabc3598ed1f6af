package dev.ccagent.it.kwik;

import dev.ccagent.it.ProjectRoot;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Keeps {@code docs/compatibility.md} honest: every row names tests that exist; every version in a
 * row appears in one of those tests or in the build's poms; "yes" under "at start" needs a
 * {@code -javaagent} (or {@code javaagent(}) in one of its tests, "yes" under "late attach" a
 * {@code loadAgent} (or {@code KwikIt.attach(}, which calls it); and each application test of this
 * package is named by some row.
 */
class CompatibilityTableTest {

    static final Pattern VERSION = Pattern.compile("\\b\\d+\\.\\d+(?:\\.\\d+)?\\b");
    static final Pattern TEST = Pattern.compile("`(\\w+Test)`");
    static final List<String> APPLICATION_TESTS = List.of("KwikVersionsTest", "KwikSpringBootJarTest",
            "KwikJava25Test", "OtherAgentsTest", "KwikSenderConstructorTest", "FlupkeTest", "FlupkeFileServerDownloadsTest",
            "KwikNonDelegatingLoaderTest");

    static String testSource(Path root, String name) throws IOException {
        for (String module : new String[] {"integration-tests", "agent"}) {
            try (var files = Files.walk(root.resolve(module).resolve("src/test/java"))) {
                List<Path> hits = files.filter(p -> p.getFileName().toString().equals(name + ".java")).toList();
                if (!hits.isEmpty()) {
                    return Files.readString(hits.get(0));
                }
            }
        }
        return null;
    }

    /** A row of a table in a doc: its line and its cells (split at "|", the first one before the table). */
    record Row(String line, String[] cells) {
    }

    /**
     * The rows of the table in {@code doc}, which must exist: its header (first cell {@code header}) and
     * separator left out; each row has its 7 cells.
     */
    static List<Row> tableRows(Path doc, String header) throws IOException {
        assertTrue(Files.isRegularFile(doc), doc + " is missing");
        List<Row> rows = new ArrayList<>();
        for (String line : Files.readAllLines(doc)) {
            if (!line.startsWith("|") || line.startsWith("| ---") || line.startsWith("| " + header)) {
                continue;
            }
            String[] cells = line.split("\\|");
            assertTrue(cells.length >= 8, "a row needs 7 cells: " + line);
            rows.add(new Row(line, cells));
        }
        return rows;
    }

    /** The build's two poms, where the versions it fetches are named. */
    static String poms(Path root) throws IOException {
        return Files.readString(root.resolve("pom.xml")) + Files.readString(root.resolve("integration-tests/pom.xml"));
    }

    @Test
    void theTableMatchesTheTests() throws IOException {
        Path root = ProjectRoot.get();
        Path doc = root.resolve("docs/compatibility.md");
        String poms = poms(root);
        List<String> named = new ArrayList<>();
        int rows = 0;
        for (Row row : tableRows(doc, "library")) {
            String line = row.line();
            String[] cells = row.cells();
            String versions = cells[2];
            String atStart = cells[4].trim();
            String late = cells[5].trim();
            Matcher t = TEST.matcher(cells[7]);
            StringBuilder sources = new StringBuilder();
            while (t.find()) {
                String src = testSource(root, t.group(1));
                assertTrue(src != null, "row names a test that does not exist: " + t.group(1) + " in " + line);
                sources.append(src);
                named.add(t.group(1));
            }
            assertTrue(sources.length() > 0, "row names no test: " + line);
            Matcher v = VERSION.matcher(versions);
            while (v.find()) {
                assertTrue(sources.indexOf(v.group()) >= 0 || poms.contains(v.group()),
                        "version " + v.group() + " is in the table but neither in its tests nor in the poms: " + line);
            }
            if (atStart.equals("yes")) {
                assertTrue(sources.indexOf("javaagent") >= 0, "'at start' claimed without -javaagent: " + line);
            }
            if (late.equals("yes")) {
                assertTrue(sources.indexOf("loadAgent(") >= 0 || sources.indexOf("KwikIt.attach(") >= 0,
                        "'late attach' claimed without loadAgent or KwikIt.attach: " + line);
            }
            rows++;
        }
        assertTrue(rows >= 5, "the table has too few rows: " + rows);
        for (String test : APPLICATION_TESTS) {
            assertTrue(named.contains(test), test + " is not named by any row of " + doc);
        }
    }

    /**
     * A test named in the Netty table: {@code Class} or {@code Class.method}; a bare lower-case {@code method}
     * after one is that class's.
     */
    static final Pattern NETTY_REF = Pattern.compile("`(?:(\\w+Test)\\.)?(\\w+)`");

    /**
     * {@code docs/compatibility-netty.md}: every test and test method a row names exists, and each row's
     * library version (the first version in its versions cell) is one the build fetches (the poms).
     */
    @Test
    void theNettyTableMatchesTheTests() throws IOException {
        Path root = ProjectRoot.get();
        Path doc = root.resolve("docs/compatibility-netty.md");
        String poms = poms(root);
        int rows = 0;
        for (Row row : tableRows(doc, "Library")) {
            String line = row.line();
            String[] cells = row.cells();
            Matcher v = VERSION.matcher(cells[2]);
            assertTrue(v.find() && poms.contains(v.group()), "the row's version is not one the build fetches: " + line);
            Matcher t = NETTY_REF.matcher(cells[7]);
            String current = null;
            String src = null;
            int refs = 0;
            while (t.find()) {
                if (t.group(1) != null || t.group(2).endsWith("Test")) {
                    current = t.group(1) != null ? t.group(1) : t.group(2);
                    src = testSource(root, current);
                    assertTrue(src != null, "row names a test that does not exist: " + current + " in " + line);
                    refs++;
                }
                if (Character.isLowerCase(t.group(2).charAt(0))) { // a method; other names (event types) are text
                    assertTrue(src != null && src.contains(" " + t.group(2) + "("),
                            "row names a test method that does not exist: " + current + "." + t.group(2) + " in " + line);
                }
            }
            assertTrue(refs > 0, "row names no test: " + line);
            rows++;
        }
        assertTrue(rows >= 5, "the Netty table has too few rows: " + rows);
    }
}
