package dev.ccagent.agent.cli;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.net.URL;
import java.net.URLConnection;
import java.net.URLStreamHandler;
import java.util.Collections;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarInputStream;

/**
 * The report module, nested in ccagent.jar as one resource ({@value #RESOURCE}) so that a server that
 * loads the agent never sees a report class: only the CLI's {@code report} command reads that jar, into
 * memory (no temporary file), and runs its entry point ({@value #ENTRY}{@code .run}) in a class loader of
 * its own whose parent is the agent's.
 */
public final class ReportJar {

    static final String RESOURCE = "META-INF/ccagent/report.jar";
    static final String ENTRY = "dev.ccagent.report.ReportCommandLine";

    private static ClassLoader loader;

    private ReportJar() {
    }

    /** Runs {@code ReportCommandLine.run(args, out, err)} of the nested report jar; returns its exit status. */
    static int run(String[] args, PrintWriter out, PrintWriter err) {
        try {
            return (int) loader().loadClass(ENTRY)
                    .getMethod("run", String[].class, PrintWriter.class, PrintWriter.class)
                    .invoke(null, args, out, err);
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException) {
                throw (RuntimeException) cause;
            }
            if (cause instanceof Error) {
                throw (Error) cause;
            }
            throw new IllegalStateException(cause);
        } catch (IOException | ReflectiveOperationException e) {
            throw new CliException(1, "cannot load the report (" + RESOURCE + " in ccagent.jar): " + e);
        }
    }

    /** The class loader of the nested report jar (read once per JVM). */
    public static synchronized ClassLoader loader() throws IOException {
        if (loader == null) {
            ClassLoader parent = ReportJar.class.getClassLoader();
            Map<String, byte[]> entries = new HashMap<>();
            try (InputStream jar = parent.getResourceAsStream(RESOURCE)) {
                if (jar == null) {
                    throw new IOException("no " + RESOURCE + " on the class path (a build without the report module)");
                }
                try (JarInputStream in = new JarInputStream(jar)) {
                    for (JarEntry e; (e = in.getNextJarEntry()) != null; ) {
                        if (!e.isDirectory()) {
                            entries.put(e.getName(), in.readAllBytes());
                        }
                    }
                }
            }
            loader = new InMemoryJarLoader(entries, parent);
        }
        return loader;
    }

    /** Classes and resources from a jar's entries held in memory; the parent first, as usual. */
    static final class InMemoryJarLoader extends ClassLoader {
        static {
            registerAsParallelCapable();
        }

        private final Map<String, byte[]> entries;
        private final URLStreamHandler handler = new URLStreamHandler() {
            @Override
            protected URLConnection openConnection(URL u) {
                return new URLConnection(u) {
                    @Override
                    public void connect() {
                    }

                    @Override
                    public InputStream getInputStream() throws IOException {
                        byte[] b = entries.get(u.getPath().substring(1));
                        if (b == null) {
                            throw new IOException("no " + u);
                        }
                        return new ByteArrayInputStream(b);
                    }
                };
            }
        };

        InMemoryJarLoader(Map<String, byte[]> entries, ClassLoader parent) {
            super("ccagent-report", parent);
            this.entries = entries;
        }

        @Override
        protected Class<?> findClass(String name) throws ClassNotFoundException {
            byte[] b = entries.get(name.replace('.', '/') + ".class");
            if (b == null) {
                throw new ClassNotFoundException(name);
            }
            return defineClass(name, b, 0, b.length);
        }

        @Override
        protected URL findResource(String name) {
            if (!entries.containsKey(name)) {
                return null;
            }
            try {
                return new URL("ccagent-report", "", -1, "/" + name, handler);
            } catch (java.net.MalformedURLException e) {
                return null;
            }
        }

        @Override
        protected Enumeration<URL> findResources(String name) {
            URL u = findResource(name);
            return u == null ? Collections.emptyEnumeration() : Collections.enumeration(java.util.List.of(u));
        }
    }
}
