package dev.ccagent.agent.instrument;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** What the installer leaves behind in the JVM it runs in. */
class InstallerTest {

    /**
     * Skipping Byte Buddy's Nexus sets Byte Buddy's switch only for the moment its accessor initializes: a value the
     * JVM had stays, and a switch that was not set is not set afterwards. (That the Nexus is not loaded is read from
     * a server JVM's class-loading log: the integration tests' {@code ServerLoadedClassesTest}.)
     */
    @Test
    void skippingTheNexusLeavesByteBuddysSwitchAsItWas() {
        String property = net.bytebuddy.dynamic.Nexus.PROPERTY;
        String before = System.getProperty(property);
        try {
            System.setProperty(property, "false");
            Installer.skipNexus();
            assertEquals("false", System.getProperty(property));
            System.clearProperty(property);
            Installer.skipNexus();
            assertNull(System.getProperty(property));
        } finally {
            if (before == null) {
                System.clearProperty(property);
            } else {
                System.setProperty(property, before);
            }
        }
    }
}
