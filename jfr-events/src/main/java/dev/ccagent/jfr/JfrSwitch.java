package dev.ccagent.jfr;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Whether any JFR recording is running in this JVM, as one volatile boolean for hot paths:
 *
 * <pre>
 *   if (JfrSwitch.on) {                 // false whenever no recording runs: no allocation, no call
 *       PacingStall e = new PacingStall();
 *       if (e.shouldCommit()) { e.x = ...; e.commit(); }
 *   }
 * </pre>
 *
 * Kept current by a {@link jdk.jfr.FlightRecorderListener} ({@link #install()}), which does not
 * initialise Flight Recorder itself: until some recording is created the switch stays off and JFR
 * costs the host nothing. Fail open: without the {@code jdk.jfr} module (a jlinked runtime) the
 * switch simply stays off.
 */
public final class JfrSwitch {

    /** True while at least one recording is in state RUNNING. */
    public static volatile boolean on;

    private static volatile boolean available;
    private static boolean installed;
    private static final List<Runnable> ON_INIT = new CopyOnWriteArrayList<>();
    private static volatile boolean recorderInitialized;

    private JfrSwitch() {
    }

    /** Registers the listener once; false when JFR is not available in this runtime. */
    public static synchronized boolean install() {
        if (installed) {
            return available;
        }
        installed = true;
        try {
            if (ModuleLayer.boot().findModule("jdk.jfr").isEmpty()) {
                return false;
            }
            Listener.register();
            available = true;
        } catch (Throwable t) {
            available = false;
        }
        return available;
    }

    /** Whether JFR is present and the listener is registered. */
    public static boolean available() {
        return available;
    }

    /**
     * Runs {@code action} once Flight Recorder is initialised (immediately if it already is), e.g. to
     * register periodic events without initialising JFR in a JVM that never records.
     */
    public static void whenRecorderInitialized(Runnable action) {
        if (!install()) {
            return;
        }
        Runnable once = new Runnable() {
            private final java.util.concurrent.atomic.AtomicBoolean ran = new java.util.concurrent.atomic.AtomicBoolean();

            @Override
            public void run() {
                if (ran.compareAndSet(false, true)) {
                    action.run();
                }
            }
        };
        ON_INIT.add(once);
        if (recorderInitialized || Listener.initializedNow()) {
            recorderInitialized = true;
            runInit(once);
        }
    }

    static void initialized() {
        recorderInitialized = true;
        for (Runnable r : ON_INIT) {
            runInit(r);
        }
        refresh();
    }

    private static void runInit(Runnable r) {
        try {
            r.run();
        } catch (Throwable t) {
            // a hook that fails must not break the host's recording
        }
    }

    /** Re-reads the recordings' states (also called by the agent's timer: settings can change under us). */
    public static void refresh() {
        if (available) {
            try {
                on = Listener.anyRunning();
            } catch (Throwable t) {
                on = false;
            }
        }
    }

    /** Isolates every jdk.jfr reference, so that this class loads on runtimes without the module. */
    private static final class Listener implements jdk.jfr.FlightRecorderListener {
        static void register() {
            jdk.jfr.FlightRecorder.addListener(new Listener());
        }

        static boolean initializedNow() {
            return jdk.jfr.FlightRecorder.isInitialized();
        }

        static boolean anyRunning() {
            if (!jdk.jfr.FlightRecorder.isInitialized()) {
                return false;
            }
            for (jdk.jfr.Recording r : jdk.jfr.FlightRecorder.getFlightRecorder().getRecordings()) {
                if (r.getState() == jdk.jfr.RecordingState.RUNNING) {
                    return true;
                }
            }
            return false;
        }

        @Override
        public void recorderInitialized(jdk.jfr.FlightRecorder recorder) {
            initialized();
        }

        @Override
        public void recordingStateChanged(jdk.jfr.Recording recording) {
            refresh();
        }
    }
}
