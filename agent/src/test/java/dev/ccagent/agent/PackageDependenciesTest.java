package dev.ccagent.agent;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The agent's structure, read from its class files (ArchUnit): every package of ccagent's main code
 * (the agent, the algorithms, the event classes) is free of cycles; the agent's core names no target
 * library; a target library's package depends on the core, never on another library's.
 * docs/architecture.md describes the packages these rules keep apart.
 */
class PackageDependenciesTest {

    /** The agent's packages that belong to one target library each. */
    static final String[] LIBRARIES = {"dev.ccagent.agent.kwik..", "dev.ccagent.agent.netty.."};

    /** The libraries' own classes. */
    static final String[] LIBRARY_TYPES = {"tech.kwik..", "io.netty.."};

    private static JavaClasses classes;

    @BeforeAll
    static void importMainClasses() {
        classes = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("dev.ccagent");
        // the rules below must see the whole agent, or they would pass on nothing
        assertTrue(classes.contain(CcAgent.class), "the agent's classes were imported");
        assertTrue(classes.contain("dev.ccagent.agent.kwik.KwikModule") && classes.contain("dev.ccagent.agent.netty.NettyModule"),
                "the target libraries' packages were imported");
        assertTrue(classes.contain("dev.ccagent.cc.CongestionController"), "cc-impl's classes were imported");
    }

    @Test
    void noPackageCycles() {
        ArchRule rule = slices().matching("dev.ccagent.(**)").should().beFreeOfCycles();
        rule.check(classes);
    }

    @Test
    void theCoreNamesNoTargetLibrary() {
        ArchRule rule = noClasses()
                .that().resideInAPackage("dev.ccagent..")
                .and().resideOutsideOfPackages(LIBRARIES)
                .should().dependOnClassesThat().resideInAnyPackage(LIBRARIES)
                .orShould().dependOnClassesThat().resideInAnyPackage(LIBRARY_TYPES)
                .because("the core works with any library through connection.LiveConnection and instrument.TargetLibrary");
        rule.check(classes);
    }

    @Test
    void aLibraryPackageNamesNoOtherLibrary() {
        noClasses().that().resideInAPackage("dev.ccagent.agent.kwik..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.ccagent.agent.netty..", "io.netty..")
                .check(classes);
        noClasses().that().resideInAPackage("dev.ccagent.agent.netty..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.ccagent.agent.kwik..", "tech.kwik..")
                .check(classes);
    }
}
