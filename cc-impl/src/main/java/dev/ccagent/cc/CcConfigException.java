package dev.ccagent.cc;

/** A bad algorithm name or option; the message names the problem and what would be accepted. */
public final class CcConfigException extends IllegalArgumentException {

    public CcConfigException(String message) {
        super(message);
    }
}
