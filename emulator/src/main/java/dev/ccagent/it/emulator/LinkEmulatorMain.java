package dev.ccagent.it.emulator;

import dev.ccagent.cc.CcConfigException;
import dev.ccagent.cc.Units;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Runs the link emulator from the command line:
 * <pre>
 *   java -cp integration-tests/target/classes:cc-impl/target/ccsim.jar dev.ccagent.it.emulator.LinkEmulatorMain \
 *        --server 127.0.0.1:4433 --rate 20mbit --rtt 50ms --loss 0.01 --buffer 1bdp
 * </pre>
 * Link flags apply to both directions; prefix one with {@code up.} (client → server) or
 * {@code down.} (server → client) for one direction only, e.g. {@code --down.loss 0.01}. Prints
 * {@code LISTEN <port>} when ready and each direction's counters when it stops (duration or Ctrl-C).
 */
public final class LinkEmulatorMain {

    static final String USAGE = String.join("\n",
            "usage: LinkEmulatorMain --server HOST:PORT [--port N] [--seed N] [--duration T] [link flags]",
            "link flags (both directions, or prefixed up. / down.):",
            "  --rate RATE            serialisation rate, e.g. 20mbit",
            "  --delay T              one-way delay;  --rtt T sets each direction's delay to T/2",
            "  --jitter T             extra uniform delay in [0, T), order kept",
            "  --loss P               random loss",
            "  --burst-loss G,B,L     Gilbert-Elliott: P(good->bad), P(bad->good), loss in bad",
            "  --buffer SIZE|Nbdp     drop-tail buffer (BDP from rate and RTT)",
            "  --reorder P:T          hold a packet back T with probability P",
            "  --duplicate P          duplicate with probability P",
            "  --blackout FROM-TO     drop everything between two times, e.g. 5s-6s (repeatable)",
            "  --rate-change T:RATE   new rate at time T (repeatable)",
            "  --bursty T             Wi-Fi-like service every T (aggregated delivery)");

    private LinkEmulatorMain() {
    }

    public static void main(String[] args) throws Exception {
        Parsed p;
        try {
            p = parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("link emulator: " + e.getMessage() + "\n" + USAGE);
            System.exit(2);
            return;
        }
        CountDownLatch stop = new CountDownLatch(1);
        try (LinkEmulator em = LinkEmulator.start(p.server, p.up.build(), p.down.build(), p.seed)) {
            Runtime.getRuntime().addShutdownHook(new Thread(stop::countDown));
            System.out.println("LISTEN " + em.port());
            System.out.flush();
            if (p.durationNanos > 0) {
                stop.await(p.durationNanos, TimeUnit.NANOSECONDS);
            } else {
                stop.await();
            }
            System.out.println("up   " + em.toServerStats());
            System.out.println("down " + em.toClientStats());
        }
    }

    static final class Parsed {
        InetSocketAddress server;
        int port;
        long seed = 1;
        long durationNanos;
        final LinkProfile.Builder up = LinkProfile.builder();
        final LinkProfile.Builder down = LinkProfile.builder();
    }

    static Parsed parse(String[] args) {
        Parsed p = new Parsed();
        long rtt = -1;
        List<String[]> deferredBuffers = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String flag = args[i];
            if (flag.equals("--help")) {
                throw new IllegalArgumentException("help");
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(flag + " needs a value");
            }
            String v = args[++i];
            try {
                switch (flag) {
                    case "--server":
                        int colon = v.lastIndexOf(':');
                        if (colon < 0) {
                            throw new IllegalArgumentException("--server " + v + ": expected HOST:PORT");
                        }
                        p.server = new InetSocketAddress(v.substring(0, colon), Integer.parseInt(v.substring(colon + 1)));
                        continue;
                    case "--seed":
                        p.seed = Long.parseLong(v);
                        continue;
                    case "--duration":
                        p.durationNanos = Units.parseDurationNanos(v);
                        continue;
                    case "--rtt":
                        rtt = Units.parseDurationNanos(v);
                        p.up.delay(rtt / 2);
                        p.down.delay(rtt - rtt / 2);
                        continue;
                    default:
                        break;
                }
                if (!flag.startsWith("--")) {
                    throw new IllegalArgumentException("unexpected argument " + flag);
                }
                String name = flag.substring(2);
                List<LinkProfile.Builder> targets = new ArrayList<>();
                if (name.startsWith("up.")) {
                    targets.add(p.up);
                    name = name.substring(3);
                } else if (name.startsWith("down.")) {
                    targets.add(p.down);
                    name = name.substring(5);
                } else {
                    targets.add(p.up);
                    targets.add(p.down);
                }
                for (LinkProfile.Builder b : targets) {
                    if (name.equals("buffer") && v.toLowerCase(Locale.ROOT).endsWith("bdp")) {
                        deferredBuffers.add(new String[] {b == p.up ? "up" : "down", v});
                    } else {
                        apply(b, name, v);
                    }
                }
            } catch (NumberFormatException | CcConfigException e) {
                throw new IllegalArgumentException(flag + " " + v + ": " + e.getMessage());
            }
        }
        if (p.server == null) {
            throw new IllegalArgumentException("--server is required");
        }
        for (String[] d : deferredBuffers) {
            if (rtt <= 0) {
                throw new IllegalArgumentException("--buffer " + d[1] + " needs --rtt to size a BDP");
            }
            double multiple = Double.parseDouble(d[1].substring(0, d[1].length() - 3).strip());
            (d[0].equals("up") ? p.up : p.down).bufferBdp(multiple, rtt);
        }
        return p;
    }

    private static void apply(LinkProfile.Builder b, String name, String v) {
        switch (name) {
            case "rate":
                b.rate(Units.parseRateBitsPerSecond(v));
                break;
            case "delay":
                b.delay(Units.parseDurationNanos(v));
                break;
            case "jitter":
                b.jitter(Units.parseDurationNanos(v));
                break;
            case "loss":
                b.loss(Double.parseDouble(v));
                break;
            case "burst-loss":
                String[] g = fields(name, v, ",", 3, "G,B,L");
                b.burstLoss(Double.parseDouble(g[0]), Double.parseDouble(g[1]), Double.parseDouble(g[2]));
                break;
            case "buffer":
                b.buffer(Units.parseBytes(v));
                break;
            case "reorder":
                String[] r = fields(name, v, ":", 2, "P:T");
                b.reorder(Double.parseDouble(r[0]), Units.parseDurationNanos(r[1]));
                break;
            case "duplicate":
                b.duplicate(Double.parseDouble(v));
                break;
            case "blackout":
                String[] w = fields(name, v, "-", 2, "FROM-TO");
                b.blackout(Units.parseDurationNanos(w[0]), Units.parseDurationNanos(w[1]));
                break;
            case "rate-change":
                int c = v.indexOf(':');
                if (c < 0) {
                    throw new IllegalArgumentException("--rate-change " + v + ": expected T:RATE");
                }
                b.rateChange(Units.parseDurationNanos(v.substring(0, c)), Units.parseRateBitsPerSecond(v.substring(c + 1)));
                break;
            case "bursty":
                b.bursty(Units.parseDurationNanos(v));
                break;
            default:
                throw new IllegalArgumentException("unknown flag --" + name);
        }
    }

    /**
     * The value of {@code --name} split at {@code separator} (a regular expression) into exactly
     * {@code count} fields; otherwise an error that names the {@code expected} form.
     */
    private static String[] fields(String name, String v, String separator, int count, String expected) {
        String[] f = v.split(separator);
        if (f.length != count) {
            throw new IllegalArgumentException("--" + name + " " + v + ": expected " + expected);
        }
        return f;
    }
}
