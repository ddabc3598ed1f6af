package dev.ccagent.agent.kwik;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import org.junit.jupiter.api.Test;

import java.util.Set;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertTrue;

class KwikLinkageTest {

    static final String PACKAGE = "dev.ccagent.agent.kwik";

    /**
     * In a Spring Boot jar the helpers are defined again in kwik's loader ({@link KwikLinkage}); a copy
     * there is in another runtime package than the agent's classes of the same package, so a class
     * it uses that is not a helper must be public, or the copy fails with {@code IllegalAccessError}
     * (KwikPacketTimes, package-private, broke every swap in KwikSpringBootJarTest before it was listed).
     */
    @Test
    void helpersUseOnlyHelpersOrPublicClassesOfThePackage() {
        JavaClasses classes = new ClassFileImporter()
                .withImportOption(com.tngtech.archunit.core.importer.ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages(PACKAGE);
        Set<String> helpers = new TreeSet<>();
        for (String h : KwikLinkage.HELPERS) {
            helpers.add(h.substring(h.lastIndexOf('.') + 1));
        }
        int checked = 0;
        for (JavaClass c : classes) {
            String top = c.getName().substring(PACKAGE.length() + 1).replaceAll("\\$.*", "");
            if (!c.getPackageName().equals(PACKAGE) || !helpers.contains(top)) {
                continue;
            }
            checked++;
            for (Dependency d : c.getDirectDependenciesFromSelf()) {
                JavaClass target = d.getTargetClass();
                if (!target.getPackageName().equals(PACKAGE)) {
                    continue;
                }
                String targetTop = target.getName().substring(PACKAGE.length() + 1).replaceAll("\\$.*", "");
                boolean reachable = helpers.contains(targetTop) || target.getModifiers().contains(JavaModifier.PUBLIC);
                assertTrue(reachable, c.getName() + " (a helper) uses " + target.getName()
                        + ", which is neither a helper nor public: its copy in kwik's loader could not reach it");
            }
        }
        assertTrue(checked >= KwikLinkage.HELPERS.size(), "helpers found: " + checked);
    }
}
