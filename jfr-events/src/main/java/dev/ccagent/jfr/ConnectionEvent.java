package dev.ccagent.jfr;

import jdk.jfr.Label;

/**
 * An event about one connection: the library it runs on and its connection id. JFR records these
 * fields with the event class's own, after them ({@code CcEventsTest} reads them back from a recording).
 */
public abstract class ConnectionEvent extends jdk.jfr.Event {

    @Label("Library")
    public String library;

    @Label("Connection Id")
    public String connectionId;
}
