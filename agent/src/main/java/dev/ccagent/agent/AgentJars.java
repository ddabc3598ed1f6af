package dev.ccagent.agent;

import dev.ccagent.agent.runtime.AgentVersion;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.util.Enumeration;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.jar.Manifest;

/**
 * Tells a second, different ccagent jar given to the same JVM from the one already running. The JVM
 * loads an agent's class from the application class loader, which finds the first jar's classes for
 * every later jar too: a second jar's premain/agentmain would run the first jar's code with the second
 * jar's arguments. Re-attaching the same jar is a reconfiguration; a different jar is refused and
 * changes nothing (its version may not understand, or may mean something else by, the arguments).
 */
final class AgentJars {

    private static final String ANCHOR = "dev/ccagent/agent/CcAgent.class";
    private static Set<String> atFirstStart;

    private AgentJars() {
    }

    /**
     * Null when this start may proceed; else the refusal to log. The first start in a JVM always
     * proceeds (the JVM calls the agents in command-line order, so it is the first jar's). A later
     * start while more than one ccagent jar is on the application class path comes from, or may come
     * from, a different jar: refused. (Re-attaching the same jar when it is the only one is fine.)
     */
    static synchronized String refusal() {
        Set<String> now = jars();
        if (atFirstStart == null) {
            atFirstStart = now;
            return null;
        }
        if (now.size() <= 1) {
            return null;
        }
        String running = runningJar();
        StringBuilder sb = new StringBuilder();
        for (String jar : now) {
            if (!jar.equals(running)) {
                sb.append(sb.length() == 0 ? "" : ", ").append(jar).append(" (version ").append(version(jar)).append(')');
            }
        }
        return "another ccagent jar was given to this JVM: " + sb + "; ccagent " + AgentVersion.VERSION + " from "
                + running + " already runs here. The new jar is refused and changes nothing (to change versions,"
                + " restart the JVM with the one you want)";
    }

    private static String runningJar() {
        URL own = CcAgent.class.getClassLoader() == null ? null
                : CcAgent.class.getClassLoader().getResource(ANCHOR);
        if (own == null) {
            return "(unknown jar)";
        }
        String u = own.toString();
        int bang = u.lastIndexOf("!/");
        return bang > 0 ? u.substring(0, bang) : u;
    }

    private static Set<String> jars() {
        Set<String> out = new LinkedHashSet<>();
        try {
            Enumeration<URL> e = ClassLoader.getSystemResources(ANCHOR);
            while (e.hasMoreElements()) {
                String u = e.nextElement().toString();
                int bang = u.lastIndexOf("!/");
                out.add(bang > 0 ? u.substring(0, bang) : u);
            }
        } catch (IOException | RuntimeException e) {
            // unknown: treat as no other jar
        }
        return out;
    }

    private static String version(String jarUrl) {
        try (InputStream in = new URL(jarUrl + "!/META-INF/MANIFEST.MF").openStream()) {
            String v = new Manifest(in).getMainAttributes().getValue("Implementation-Version");
            return v != null ? v : "unknown";
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }
}
