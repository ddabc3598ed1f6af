package dev.ccagent.it.netty;

import io.netty.channel.EventLoop;
import io.netty.handler.codec.quic.QuicChannel;
import io.netty.handler.codec.quic.QuicConnectionPathStats;
import io.netty.util.concurrent.ScheduledFuture;

import java.util.Arrays;
import java.util.Locale;

/**
 * The application's own view of quiche's congestion window: samples a server connection's
 * {@code QuicChannel.collectPathStats(0)} (Netty's public API, quiche's {@code quiche_path_stats})
 * every few milliseconds on the connection's event loop, and reports how the window shrinks on loss.
 * Evidence from outside the agent: quiche multiplies the window by 0.5 on a loss with reno and by 0.7
 * with cubic ({@code LOSS_REDUCTION_FACTOR} / {@code BETA_CUBIC} in quiche's recovery code), while
 * BBR (gcongestion) keeps it near its bandwidth-delay estimate.
 *
 * <p>Printed once per connection: {@code QUICHE conn=N samples= drops= dropRatioP50= cwndMax=
 * lost= sent= rttMs=}; {@code dropRatioP50} is the median of new/old over consecutive samples whose
 * window went down (1.0 when none did).
 *
 * <p>Written against Netty 4.2's package; the incubator copy of the app gets its package renamed.
 */
public final class QuicheWindowProbe {

    private static final int MAX_SAMPLES = 20_000;
    private static final java.util.Set<QuicheWindowProbe> RUNNING = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private final QuicChannel channel;
    private final String label;
    private final long[] cwnd = new long[MAX_SAMPLES];
    private int n;
    private long lost;
    private long sent;
    private long rttNanos;
    private ScheduledFuture<?> task;
    private boolean reported;

    private QuicheWindowProbe(QuicChannel channel, String label) {
        this.channel = channel;
        this.label = label;
    }

    /** The connection's own id (hex) as its {@code QuicConnectionAddress} prints it: the agent's scid. */
    public static String idOf(QuicChannel channel) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("[0-9a-fA-F]{16,}")
                .matcher(String.valueOf(channel.localAddress()));
        return m.find() ? m.group().toLowerCase(Locale.ROOT) : String.valueOf(channel.localAddress());
    }

    /** Starts sampling {@code channel} every {@code periodMillis} on its event loop (0: returns null). */
    public static QuicheWindowProbe start(QuicChannel channel, String label, long periodMillis) {
        if (periodMillis <= 0) {
            return null;
        }
        QuicheWindowProbe p = new QuicheWindowProbe(channel, label);
        RUNNING.add(p);
        EventLoop loop = channel.eventLoop();
        loop.execute(() -> p.task = loop.scheduleAtFixedRate(p::sample, 0, periodMillis,
                java.util.concurrent.TimeUnit.MILLISECONDS));
        channel.closeFuture().addListener(f -> p.stop());
        return p;
    }

    private void sample() {
        if (!channel.isActive() || n >= MAX_SAMPLES) {
            return;
        }
        channel.collectPathStats(0).addListener(f -> {
            if (f.isSuccess() && n < MAX_SAMPLES) {
                QuicConnectionPathStats s = (QuicConnectionPathStats) f.getNow();
                cwnd[n++] = s.cwnd();
                lost = s.lost();
                sent = s.sent();
                rttNanos = s.rtt();
            }
        });
    }

    /** Stops sampling and prints the summary (once); the returned latch opens when it is printed. */
    public java.util.concurrent.CountDownLatch stop() {
        java.util.concurrent.CountDownLatch printed = new java.util.concurrent.CountDownLatch(1);
        Runnable r = () -> {
            if (task != null) {
                task.cancel(false);
            }
            if (!reported) {
                reported = true;
                System.out.println(summary());
            }
            RUNNING.remove(this);
            printed.countDown();
        };
        if (channel.eventLoop().inEventLoop()) {
            r.run();
        } else {
            channel.eventLoop().execute(r);
        }
        return printed;
    }

    /**
     * Stops every running probe and waits (at most 5 s) until each has printed: called by the
     * application once a download has arrived complete, so a window is sampled until the last byte.
     */
    public static void stopAll() throws InterruptedException {
        long until = System.nanoTime() + 5_000_000_000L;
        for (QuicheWindowProbe p : new java.util.ArrayList<>(RUNNING)) {
            p.stop().await(Math.max(1, until - System.nanoTime()), java.util.concurrent.TimeUnit.NANOSECONDS);
        }
    }

    String summary() {
        double[] ratios = new double[Math.max(0, n - 1)];
        int drops = 0;
        long max = 0;
        for (int i = 0; i < n; i++) {
            max = Math.max(max, cwnd[i]);
            if (i > 0 && cwnd[i] < cwnd[i - 1]) {
                ratios[drops++] = (double) cwnd[i] / cwnd[i - 1];
            }
        }
        double p50 = 1.0;
        if (drops > 0) {
            double[] d = Arrays.copyOf(ratios, drops);
            Arrays.sort(d);
            p50 = d[drops / 2];
        }
        return String.format(Locale.ROOT, "QUICHE %s samples=%d drops=%d dropRatioP50=%.3f cwndMax=%d lost=%d sent=%d "
                + "rttMs=%d", label, n, drops, p50, max, lost, sent, rttNanos / 1_000_000);
    }
}
