package dev.ccagent.it;

import javax.management.NotificationEmitter;
import javax.management.NotificationListener;
import java.lang.management.ManagementFactory;
import java.lang.ref.WeakReference;
import java.lang.reflect.Field;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A forked JVM that redeploys a "web application" {@code rounds} times, the way a servlet container
 * does: each time a fresh {@code URLClassLoader} over the library's jars and the application (the class
 * {@code -Dredeploy.app} names, with a {@code public static Object run(String keyStore, long bytes)}: kwik's
 * {@code KwikRedeployApp}, Netty QUIC's {@code NettyRedeployApp}), whose parent is the application class loader
 * (as Tomcat and Jetty set it up), made the thread's context loader while the application runs; one download in
 * it; then the loader is closed and dropped, and only a {@link WeakReference} to it is kept. At the end: full
 * GCs (several rounds, with a timeout) and one line {@code COLLECTED n OF rounds}, counted by the JDK (cleared
 * weak references), not by anything the agent keeps. For a loader still reachable: the live threads whose
 * context loader it is ({@code PINNED-BY-THREAD name}).
 *
 * <p>Its own class path holds only this class (no library, no application): the loader cannot find the
 * application through its parent.
 *
 * <pre>java -Dredeploy.app=CLASS RedeployMain ROUNDS KEYSTORE BYTES URL...</pre>
 */
public final class RedeployMain {

    private RedeployMain() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        String keyStore = args[1];
        long bytes = Long.parseLong(args[2]);
        URL[] urls = new URL[args.length - 3];
        for (int i = 3; i < args.length; i++) {
            urls[i - 3] = Path.of(args[i]).toUri().toURL();
        }
        ClassLoader app = RedeployMain.class.getClassLoader();
        String appClass = System.getProperty("redeploy.app");
        List<WeakReference<ClassLoader>> dropped = new ArrayList<>();
        for (int r = 0; r < rounds; r++) {
            URLClassLoader loader = new URLClassLoader("webapp-" + r, urls, app);
            // deployed on a thread of its own that ends with the round, as a container's deployer: what the
            // application leaves in that thread's locals (Netty's InternalThreadLocalMap) goes with it, and a native
            // library's per-thread destructors (BoringSSL's, in Netty's quiche library) run while the library is
            // still loaded (docs/compatibility-netty.md, "Redeploys")
            String result = deploy("deploy-" + r, loader, appClass, keyStore, bytes);
            System.out.println("ROUND " + r + " " + result);
            // kwik's own leak, not the agent's: its ServerConnectorImpl adds a NotificationListener (a lambda
            // of tech.kwik.core.util.MemoryWatcher) to the platform MemoryMXBean and never removes it. A
            // container removes listeners that its web application left behind; so does this test, or
            // every loader would stay reachable with or without the agent.
            int removed = removeListenersOf(loader);
            System.out.println("ROUND " + r + " removed " + removed + " MemoryMXBean listener(s) of the application");
            // undeploy: the application's threads end (its connections finish closing), then the loader closes
            int left = awaitThreadsOf(loader, 30_000);
            if (left > 0) {
                System.out.println("ROUND " + r + " " + left + " thread(s) of the application still running");
            }
            loader.close();
            dropped.add(new WeakReference<>(loader));
            loader = null;
        }
        // A loader the agent pins stays reachable for good (before the fixes of issue 24: 0 of 5, every run). One
        // hold had no path in any heap dump: the agent's executor threads (JDK ScheduledThreadPoolExecutors) sat
        // between ticks in ThreadPoolExecutor.runWorker, compiled by the JIT with kwik's own pool tasks inlined,
        // and that compiled frame kept kwik's constants, hence the loader, reachable (a survivor in 4 of 25 runs of
        // 10 rounds; recompiling runWorker in the held JVM released it). The agent now runs its periodic work on
        // its own threads (AgentScheduler): 0 of 28 such runs (173 retried downloads). Full GCs for up to 60 s
        // after the last round; the time it took is printed.
        long start = System.nanoTime();
        long deadline = start + 60_000_000_000L;
        int collected = 0;
        while (true) {
            System.gc();
            collected = 0;
            for (WeakReference<ClassLoader> ref : dropped) {
                if (ref.get() == null) {
                    collected++;
                }
            }
            if (collected == rounds || System.nanoTime() > deadline) {
                break;
            }
            Thread.sleep(250);
        }
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            ClassLoader ccl = t.getContextClassLoader();
            for (WeakReference<ClassLoader> ref : dropped) {
                if (ccl != null && ccl == ref.get()) {
                    System.out.println("PINNED-BY-THREAD " + t.getName() + " (" + ccl.getName() + ")");
                }
            }
        }
        for (int r = 0; r < rounds; r++) {
            if (dropped.get(r).get() != null) {
                System.out.println("SURVIVED webapp-" + r);
            }
        }
        String dump = System.getProperty("redeploy.heapdump");
        if (collected < rounds && dump != null) {
            // for a loader still reachable: the path from a GC root to it is in this (live-objects) heap dump
            com.sun.management.HotSpotDiagnosticMXBean hs =
                    ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class);
            java.nio.file.Files.deleteIfExists(Path.of(dump));
            hs.dumpHeap(dump, true);
            System.out.println("HEAPDUMP " + dump);
        }
        System.out.println("GC WAIT " + (System.nanoTime() - start) / 1_000_000 + " ms");
        System.out.println("COLLECTED " + collected + " OF " + rounds);
        System.out.flush();
        if (args.length > 0 && Boolean.getBoolean("redeploy.hold")) {
            Thread.sleep(Long.MAX_VALUE); // a heap dump can be taken now
        }
    }

    /** Runs the application's {@code run(keyStore, bytes)} on a new thread whose context loader is {@code loader}. */
    static String deploy(String name, ClassLoader loader, String appClass, String keyStore, long bytes) throws Exception {
        String[] result = new String[1];
        Exception[] failure = new Exception[1];
        Thread t = new Thread(() -> {
            try {
                result[0] = String.valueOf(Class.forName(appClass, true, loader)
                        .getMethod("run", String.class, long.class).invoke(null, keyStore, bytes));
            } catch (Exception e) {
                failure[0] = e;
            }
        }, name);
        t.setContextClassLoader(loader);
        t.start();
        t.join();
        if (failure[0] != null) {
            throw failure[0];
        }
        return result[0];
    }

    /** Waits until no live thread has {@code loader} as its context loader; returns how many still do. */
    static int awaitThreadsOf(ClassLoader loader, long timeoutMillis) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        while (true) {
            int n = 0;
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                if (t.getContextClassLoader() == loader && !t.getName().startsWith("ccagent-")) {
                    n++;
                }
            }
            if (n == 0 || System.nanoTime() > deadline) {
                return n;
            }
            Thread.sleep(50);
        }
    }

    /** Removes every MemoryMXBean listener whose class the loader defined (needs java.management's sun.management opened). */
    static int removeListenersOf(ClassLoader loader) throws Exception {
        NotificationEmitter emitter = (NotificationEmitter) ManagementFactory.getMemoryMXBean();
        Class<?> support = Class.forName("sun.management.NotificationEmitterSupport");
        Field list = support.getDeclaredField("listenerList");
        list.setAccessible(true);
        List<NotificationListener> mine = new ArrayList<>();
        for (Object info : new ArrayList<>((List<?>) list.get(emitter))) {
            Field f = info.getClass().getDeclaredField("listener");
            f.setAccessible(true);
            NotificationListener l = (NotificationListener) f.get(info);
            if (l != null && l.getClass().getClassLoader() == loader) {
                mine.add(l);
            }
        }
        for (NotificationListener l : mine) {
            emitter.removeNotificationListener(l);
        }
        return mine.size();
    }
}
