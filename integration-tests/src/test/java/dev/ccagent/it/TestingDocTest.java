package dev.ccagent.it;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Keeps the capability table of {@code docs/testing.md} true to the sources: every test it names under
 * "gate" exists and runs in the gate (no {@link Acceptance} on it or its class), every test it names under
 * "acceptance" carries {@link Acceptance}, every capability has a gate test, and every {@link Acceptance}
 * test of this module is named in the table. Reads sources only; forks nothing.
 */
class TestingDocTest {

    /** `Class` or `Class.method` in a cell. */
    static final Pattern REF = Pattern.compile("`(\\w+Test)(?:\\.(\\w+))?`");
    static final Pattern ACCEPTANCE_METHOD = Pattern.compile("@Acceptance\\((?:[^()]|\\([^()]*\\))*\\)\\s*(?:@[\\w.]+(?:\\((?:[^()]|\\([^()]*\\))*\\))?\\s*)*void (\\w+)\\(");
    static final Pattern ACCEPTANCE_CLASS = Pattern.compile("@Acceptance\\((?:[^()]|\\([^()]*\\))*\\)\\s*(?:@[\\w.]+(?:\\((?:[^()]|\\([^()]*\\))*\\))?\\s*)*(?:public\\s+)?(?:final\\s+)?class (\\w+)");

    /** Every test source of this module, by simple class name. */
    static Map<String, String> sources(Path root) throws IOException {
        Map<String, String> byName = new HashMap<>();
        try (Stream<Path> files = Files.walk(root.resolve("integration-tests/src/test/java"))) {
            for (Path p : files.filter(p -> p.toString().endsWith(".java")).collect(Collectors.toList())) {
                byName.put(p.getFileName().toString().replace(".java", ""), Files.readString(p));
            }
        }
        return byName;
    }

    static boolean classIsAcceptance(String name, String src) {
        Matcher m = ACCEPTANCE_CLASS.matcher(src);
        while (m.find()) {
            if (m.group(1).equals(name)) {
                return true;
            }
        }
        return false;
    }

    static Set<String> acceptanceMethods(String src) {
        Set<String> methods = new TreeSet<>();
        Matcher m = ACCEPTANCE_METHOD.matcher(src);
        while (m.find()) {
            methods.add(m.group(1));
        }
        return methods;
    }

    @Test
    void theCapabilityTableMatchesTheTests() throws IOException {
        Path root = ProjectRoot.get();
        Map<String, String> sources = sources(root);
        Path doc = root.resolve("docs/testing.md");
        List<String> lines = Files.readAllLines(doc);
        int start = lines.indexOf("## Capabilities: gate and acceptance tests");
        assertTrue(start >= 0, "docs/testing.md has no '## Capabilities: gate and acceptance tests' section");
        Set<String> namedAcceptance = new TreeSet<>();
        int rows = 0;
        for (String line : lines.subList(start + 1, lines.size())) {
            if (line.startsWith("## ")) {
                break;
            }
            if (!line.startsWith("|") || line.startsWith("| ---") || line.startsWith("| capability")) {
                continue;
            }
            String[] cells = line.split("\\|");
            assertTrue(cells.length >= 4, "a row needs 3 cells (capability, gate, acceptance): " + line);
            int gate = 0;
            Matcher g = REF.matcher(cells[2]);
            while (g.find()) {
                String src = sources.get(g.group(1));
                assertTrue(src != null, "the row names a test that does not exist: " + g.group() + " in " + line);
                assertFalse(classIsAcceptance(g.group(1), src), "a gate test whose class is @Acceptance: " + g.group());
                if (g.group(2) != null) {
                    assertTrue(src.contains(" " + g.group(2) + "("), "no such test method: " + g.group() + " in " + line);
                    assertFalse(acceptanceMethods(src).contains(g.group(2)), "a gate test marked @Acceptance: " + g.group());
                }
                gate++;
            }
            assertTrue(gate > 0, "a capability without a gate test: " + line);
            Matcher a = REF.matcher(cells[3]);
            while (a.find()) {
                String src = sources.get(a.group(1));
                assertTrue(src != null, "the row names a test that does not exist: " + a.group() + " in " + line);
                if (a.group(2) != null) {
                    assertTrue(classIsAcceptance(a.group(1), src) || acceptanceMethods(src).contains(a.group(2)),
                            "an acceptance test without @Acceptance: " + a.group() + " in " + line);
                    namedAcceptance.add(a.group(1) + "." + a.group(2));
                } else {
                    assertTrue(classIsAcceptance(a.group(1), src), "an acceptance class without @Acceptance: " + a.group());
                    namedAcceptance.add(a.group(1));
                }
            }
            rows++;
        }
        assertTrue(rows >= 9, "the capability table has too few rows: " + rows);
        // and every measurement is somewhere in the table
        Set<String> unnamed = new TreeSet<>();
        sources.forEach((name, src) -> {
            if (name.equals("Acceptance") || name.equals("TestingDocTest")) {
                return;
            }
            if (classIsAcceptance(name, src)) {
                if (!namedAcceptance.contains(name)) {
                    unnamed.add(name);
                }
            } else {
                for (String method : acceptanceMethods(src)) {
                    if (!namedAcceptance.contains(name) && !namedAcceptance.contains(name + "." + method)) {
                        unnamed.add(name + "." + method);
                    }
                }
            }
        });
        assertEquals(Set.of(), unnamed, "@Acceptance tests that docs/testing.md's capability table does not name");
    }
}
