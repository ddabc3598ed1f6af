package dev.ccagent.it;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DebianToolTest {

    @Test
    void aDependsFieldGivesThePackageNamesFirstOfEachAlternative() {
        // ngtcp2-server 0.12.1's field, with an alternative and an architecture qualifier added
        assertEquals(List.of("libc6", "libev4", "libgnutls30", "libnghttp3-3", "libngtcp2-crypto-gnutls2", "libngtcp2-9",
                        "ssl-cert", "libstdc++6"),
                DebianTool.dependencies("libc6 (>= 2.34), libev4 (>= 1:4.04), libgnutls30 (>= 3.7.5), "
                        + "libnghttp3-3 (>= 0.8.0) | libnghttp3-9, libngtcp2-crypto-gnutls2 (>= 0.12.1), libngtcp2-9 (>= 0.12.0), "
                        + "ssl-cert, libstdc++6:amd64 (>= 11)"));
    }

    @Test
    void anInstalledProgramIsTakenFromThePath() {
        DebianTool sh = DebianTool.find("sh", "dash", Path.of("target", "never-used"));
        assertTrue(sh.binary().endsWith("sh"), sh.toString());
        assertEquals(sh.binary().toString(), sh.toString(), "installed: no library path");
    }

    @Test
    void aPackageThatCannotBeFetchedIsNamedWithTheInstallCommand() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> DebianTool.find(
                "no-such-program-ccagent", "no-such-package-ccagent", Path.of("target", "debian-tools-test")));
        assertTrue(e.getMessage().contains("apt-get install no-such-package-ccagent"), e.getMessage());
    }
}
