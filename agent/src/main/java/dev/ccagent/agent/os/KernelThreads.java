package dev.ccagent.agent.os;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What the kernel says of a thread, where it does (Linux's {@code /proc}, proc(5)): its id, its state (R running or
 * waiting for a CPU, S asleep: {@code /proc/pid/task/tid/stat}, field 3) and how many times it went to sleep
 * ({@code voluntary_ctxt_switches} in {@code status}). A thread parked in {@code epoll_wait} is asleep there; one
 * waiting for a CPU is not. A thread in state R at the start of an interval whose count did not move never slept
 * in it.
 *
 * <p>Every method answers "unknown" (-1) where {@code /proc} is missing or unreadable (not Linux, a security
 * manager). Java 17 has no API for a thread's kernel id, so the thread reads its own ({@code /proc/thread-self})
 * once; the CPU spin monitor reads the counts only during a poll check.
 */
public final class KernelThreads {

    private static final ThreadLocal<int[]> OWN_ID = new ThreadLocal<>();

    private KernelThreads() {
    }

    /** The state of a thread the kernel did not describe. */
    public static final char UNKNOWN = '?';
    /** Running, or runnable and waiting for a CPU: not asleep. */
    public static final char RUNNING = 'R';

    /** The calling thread's id in the kernel (its {@code tid}), -1 when it cannot be read; read once per thread. */
    public static int currentId() {
        int[] id = OWN_ID.get();
        if (id == null) {
            id = new int[] {readOwnId()};
            OWN_ID.set(id);
        }
        return id[0];
    }

    private static int readOwnId() {
        try {
            // "PID/task/TID"
            String link = Files.readSymbolicLink(Path.of("/proc/thread-self")).toString();
            return Integer.parseInt(link.substring(link.lastIndexOf('/') + 1));
        } catch (Throwable t) { // not Linux, no /proc, a security manager: no id
            return -1;
        }
    }

    /**
     * How many times thread {@code tid} of this process has gone to sleep (its voluntary context switches), -1 when
     * {@code tid} is negative or its {@code status} cannot be read (the thread ended).
     */
    public static long voluntarySwitches(int tid) {
        if (tid < 0) {
            return -1;
        }
        try {
            return parseVoluntarySwitches(Files.readString(Path.of("/proc/self/task/" + tid + "/status")));
        } catch (Throwable t) {
            return -1;
        }
    }

    /**
     * The state of thread {@code tid} of this process as the kernel has it now ('R', 'S', 'D', ...), or
     * {@link #UNKNOWN} when {@code tid} is negative or its {@code stat} cannot be read (the thread ended).
     */
    public static char state(int tid) {
        if (tid < 0) {
            return UNKNOWN;
        }
        try {
            return parseState(Files.readString(Path.of("/proc/self/task/" + tid + "/stat")));
        } catch (Throwable t) {
            return UNKNOWN;
        }
    }

    /** Field 3 of a {@code stat} line, "tid (comm) S ...": the name may hold spaces and parentheses, so it follows the last ')'. */
    static char parseState(String stat) {
        int close = stat.lastIndexOf(')');
        return close >= 0 && close + 2 < stat.length() && stat.charAt(close + 1) == ' ' ? stat.charAt(close + 2) : UNKNOWN;
    }

    /** The {@code voluntary_ctxt_switches} line of a {@code status} text, -1 when it has none. */
    static long parseVoluntarySwitches(String status) {
        String key = "\nvoluntary_ctxt_switches:";
        int at = status.indexOf(key);
        if (at < 0) {
            return -1;
        }
        int end = status.indexOf('\n', at + key.length());
        try {
            return Long.parseLong(status.substring(at + key.length(), end < 0 ? status.length() : end).trim());
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
