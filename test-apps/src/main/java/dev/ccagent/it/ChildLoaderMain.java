package dev.ccagent.it;

import java.io.File;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;

/**
 * Runs a main class inside a child class loader the way a servlet container runs a web application:
 * a {@code URLClassLoader} named {@code NAME}, child first (it defines every class it can find on its
 * own class path, JDK classes aside, before asking its parent, the application class loader, as
 * Tomcat's and Jetty's web-application loaders do), made the thread's context loader. The libraries
 * the application uses (Netty, kwik) are on the child's path only, so the application class loader,
 * and with it the agent, does not see them.
 *
 * <p>With {@code -Dchild.parent=platform} the child's parent is the platform class loader instead: a loader
 * that never delegates to the application class loader (as some web-application and OSGi-style loaders do), so
 * nothing on the application class path, the agent included, is visible from it.
 *
 * <pre>java -Dchild.name=NAME -Dchild.classpath=CHILD_CLASS_PATH -Dchild.main=MAIN_CLASS [-Dchild.parent=platform] ChildLoaderMain [ARGS...]</pre>
 * (the arguments go to the child's main as they are).
 */
public final class ChildLoaderMain {

    private ChildLoaderMain() {
    }

    public static void main(String[] args) throws Exception {
        String name = System.getProperty("child.name", "child");
        String[] entries = System.getProperty("child.classpath").split(File.pathSeparator);
        URL[] urls = new URL[entries.length];
        for (int i = 0; i < entries.length; i++) {
            urls[i] = Path.of(entries[i]).toUri().toURL();
        }
        String parentName = System.getProperty("child.parent", "application");
        ClassLoader parent;
        switch (parentName) {
            case "application": parent = ChildLoaderMain.class.getClassLoader(); break;
            case "platform": parent = ClassLoader.getPlatformClassLoader(); break;
            default: throw new IllegalArgumentException("child.parent: application or platform, not " + parentName);
        }
        try (URLClassLoader loader = new ChildFirst(name, urls, parent)) {
            Thread.currentThread().setContextClassLoader(loader);
            Method main = Class.forName(System.getProperty("child.main"), true, loader).getMethod("main", String[].class);
            main.invoke(null, (Object) args);
        }
    }

    /** Child first, except for the JDK's own classes. */
    static final class ChildFirst extends URLClassLoader {
        ChildFirst(String name, URL[] urls, ClassLoader parent) {
            super(name, urls, parent);
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (name.startsWith("java.") || name.startsWith("javax.") || name.startsWith("jdk.")
                    || name.startsWith("sun.") || name.startsWith("com.sun.")) {
                return super.loadClass(name, resolve);
            }
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null) {
                    try {
                        c = findClass(name);
                    } catch (ClassNotFoundException e) {
                        return super.loadClass(name, resolve);
                    }
                }
                if (resolve) {
                    resolveClass(c);
                }
                return c;
            }
        }
    }
}
