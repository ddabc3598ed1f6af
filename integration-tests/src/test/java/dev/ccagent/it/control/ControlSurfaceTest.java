package dev.ccagent.it.control;

import com.sun.tools.attach.VirtualMachine;
import dev.ccagent.it.ForkedJvm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The agent's JMX {@code set} as any JMX client on the machine reaches it: a forked JVM with the
 * agent at start, its local JMX connector (through the attach API, 127.0.0.1 only), and the file
 * system checked from here. Keys that name files or only apply at install are refused and nothing
 * is read or written; concurrent sets lose no update; set after detach is refused.
 */
class ControlSurfaceTest {

    static final String OBJECT = "dev.ccagent:type=Control";

    static Path work(String name) throws Exception {
        Path dir = Path.of(System.getProperty("ccagent.it.work", System.getProperty("java.io.tmpdir"))).resolve(name);
        if (Files.exists(dir)) {
            try (Stream<Path> s = Files.walk(dir)) {
                s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
        Files.createDirectories(dir);
        return dir;
    }

    static String testClasses() throws Exception {
        // IdleMain (test-apps) and this module's test classes, as when IdleMain was one of them
        return Path.of(IdleMain.class.getProtectionDomain().getCodeSource().getLocation().toURI()) + java.io.File.pathSeparator
                + Path.of(ControlSurfaceTest.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    /** Invokes set; the thrown message, or null when it was accepted. */
    static String set(MBeanServerConnection c, String entries) throws Exception {
        try {
            c.invoke(new ObjectName(OBJECT), "set", new Object[] {entries}, new String[] {String.class.getName()});
            return null;
        } catch (javax.management.MBeanException | javax.management.RuntimeMBeanException
                 | javax.management.RuntimeOperationsException e) {
            Throwable t = e;
            while (t.getCause() != null && t.getCause() != t) {
                t = t.getCause();
            }
            return String.valueOf(t.getMessage());
        }
    }

    static String configuration(MBeanServerConnection c) throws Exception {
        return (String) c.getAttribute(new ObjectName(OBJECT), "Configuration");
    }

    @Test
    @Timeout(value = 150, unit = TimeUnit.SECONDS)
    void setRefusesFilesAndInstallKeysLosesNoUpdateAndIsRefusedAfterDetach() throws Exception {
        Path dir = work("control-surface");
        Path jar = Path.of(System.getProperty("ccagent.jar")).toAbsolutePath();
        // a config file a JMX client could name: its entries must not be read (never applied, never echoed)
        Path planted = dir.resolve("planted.properties");
        Files.writeString(planted, "cc=bbr1\nsecret-line-7f3a=do-not-echo\n");
        Path jfr = dir.resolve("written-by-jmx.jfr");
        Path profileComma = dir.resolve("prof,event=itimer");
        Path profile = dir.resolve("profiles");

        try (ForkedJvm app = ForkedJvm.builder("idle", IdleMain.class.getName())
                .classPath(testClasses())
                .jvmArgs("-javaagent:" + jar + "=cc=newreno;log=info", "-Xmx128m")
                .dir(dir)
                .start()) {
            app.awaitLine(Pattern.compile("^READY"), Duration.ofSeconds(60));
            VirtualMachine vm = VirtualMachine.attach(Long.toString(app.pid()));
            String url;
            try {
                url = vm.startLocalManagementAgent();
            } finally {
                vm.detach();
            }
            assertTrue(url.contains("127.0.0.1") || url.contains("localhost"), "JMX connector not local: " + url);
            try (JMXConnector connector = JMXConnectorFactory.connect(new JMXServiceURL(url))) {
                MBeanServerConnection c = connector.getMBeanServerConnection();
                String before = configuration(c);
                assertTrue(before.contains("cc=newreno"), before);

                String m = set(c, "config=/etc/passwd");
                assertTrue(m != null && m.contains("config") && m.contains("refused"), "config=/etc/passwd: " + m);
                assertFalse(m.contains("root:"), "a file's contents echoed back: " + m);
                m = set(c, "config=" + planted);
                assertTrue(m != null && m.contains("refused"), "config=planted: " + m);
                assertFalse(m.contains("secret-line-7f3a") || m.contains("do-not-echo"), "planted file echoed: " + m);
                m = set(c, "jfr=" + jfr);
                assertTrue(m != null && m.contains("jfr") && m.contains("refused"), "jfr=: " + m);
                m = set(c, "profile-on-spin=" + profileComma);
                assertTrue(m != null && m.contains("profile-on-spin") && m.contains("refused"), "profile-on-spin: " + m);
                m = set(c, "profile-on-spin=" + profile);
                assertTrue(m != null && m.contains("refused"), "profile-on-spin dir: " + m);
                for (String key : List.of("fix.kwik-stream-stall=on", "detect=off", "targets=kwik", "jfr.max-size=10MiB")) {
                    m = set(c, "cc=cubic;" + key);
                    assertTrue(m != null && m.contains(key.substring(0, key.indexOf('='))) && m.contains("refused"),
                            key + ": " + m);
                }
                assertEquals(before, configuration(c), "a refused set changed the configuration");

                // many concurrent sets, each of its own key: none may be lost
                String[] algos = {"newreno", "cubic", "reno-hbdp", "bbr1", "bbr3"};
                List<String> keys = new ArrayList<>();
                for (String a : algos) {
                    keys.add("opt." + a + ".initial-window");
                    keys.add("opt." + a + ".mss");
                }
                int rounds = 8;
                CountDownLatch go = new CountDownLatch(1);
                ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
                List<Thread> threads = new ArrayList<>();
                for (int i = 0; i < keys.size(); i++) {
                    String key = keys.get(i);
                    Thread t = new Thread(() -> {
                        try {
                            go.await();
                            for (int r = 1; r <= rounds; r++) {
                                String value = key.endsWith("mss") ? Integer.toString(1200 + r) : Integer.toString(10 + r);
                                String problem = set(c, key + "=" + value);
                                if (problem != null) {
                                    failures.add(key + ": " + problem);
                                }
                            }
                        } catch (Exception e) {
                            failures.add(key + ": " + e);
                        }
                    }, "jmx-set-" + i);
                    threads.add(t);
                    t.start();
                }
                go.countDown();
                for (Thread t : threads) {
                    t.join(60_000);
                    assertFalse(t.isAlive(), t.getName() + " still running");
                }
                assertTrue(failures.isEmpty(), "concurrent sets failed: " + failures);
                String after = configuration(c);
                Map<String, String> entries = new java.util.HashMap<>();
                for (String e : after.split(";")) {
                    int eq = e.indexOf('=');
                    entries.put(e.substring(0, eq), e.substring(eq + 1));
                }
                for (String key : keys) {
                    String expect = key.endsWith("mss") ? Integer.toString(1200 + rounds) : Integer.toString(10 + rounds);
                    assertEquals(expect, entries.get(key), "update of " + key + " lost: " + after);
                }

                c.invoke(new ObjectName(OBJECT), "detach", new Object[0], new String[0]);
                m = set(c, "cc=bbr1");
                assertTrue(m != null && m.contains("detached"), "set after detach: " + m);
                assertEquals(Boolean.FALSE, c.getAttribute(new ObjectName(OBJECT), "Active"));
            }
            app.closeStdin();
            app.waitFor(Duration.ofSeconds(30));
            String log = app.stderr();
            assertEquals(1, log.split("installed on", -1).length - 1, "installed more than once:\n" + log);
        }
        // nothing written where the refused keys pointed, nothing read from the planted file (unchanged)
        assertFalse(Files.exists(jfr), jfr + " was written");
        assertFalse(Files.exists(profileComma), profileComma + " was created");
        assertFalse(Files.exists(profile), profile + " was created");
        assertEquals("cc=bbr1\nsecret-line-7f3a=do-not-echo\n", Files.readString(planted));
    }
}
