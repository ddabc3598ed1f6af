package dev.ccagent.agent.cli;

/** A failure the CLI reports as one line and an exit status (1: failed, 2: bad usage). */
final class CliException extends RuntimeException {

    final int exitCode;

    CliException(int exitCode, String message) {
        super(message);
        this.exitCode = exitCode;
    }
}
