package dev.ccagent.cc;

/** The modes our algorithms report; each has a stable label for logs, JFR and traces. */
public enum CongestionMode {
    SLOW_START("slow start"),
    CONGESTION_AVOIDANCE("congestion avoidance"),
    RECOVERY("recovery"),
    STARTUP("STARTUP"),
    DRAIN("DRAIN"),
    /** BBRv1 gain cycling; the phase index is in {@link CcSnapshot#probeBwPhase}. */
    PROBE_BW("PROBE_BW"),
    PROBE_BW_DOWN("PROBE_BW_DOWN"),
    PROBE_BW_CRUISE("PROBE_BW_CRUISE"),
    PROBE_BW_REFILL("PROBE_BW_REFILL"),
    PROBE_BW_UP("PROBE_BW_UP"),
    PROBE_RTT("PROBE_RTT");

    private final String label;

    CongestionMode(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }

    /** Whether this mode belongs to BBR's bandwidth probing (any PROBE_BW flavour). */
    public boolean isProbeBw() {
        return this == PROBE_BW || this == PROBE_BW_DOWN || this == PROBE_BW_CRUISE
                || this == PROBE_BW_REFILL || this == PROBE_BW_UP;
    }

    /** Whether this is the initial exponential phase (slow start or STARTUP). */
    public boolean isStartup() {
        return this == SLOW_START || this == STARTUP;
    }
}
