package dev.ccagent.jfr;

import jdk.jfr.Label;

/**
 * An event about one connection's congestion controller: a {@link ConnectionEvent} with the algorithm in
 * charge. A recording lists the fields as the event's own, then algorithm, library and connection id.
 */
public abstract class ControllerEvent extends ConnectionEvent {

    @Label("Algorithm")
    public String algorithm;
}
