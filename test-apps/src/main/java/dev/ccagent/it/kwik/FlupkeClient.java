package dev.ccagent.it.kwik;

import tech.kwik.flupke.Http3Client;

import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/**
 * flupke's HTTP/3 client: downloads {@code /bytes/N/seed/S} from {@link FlupkeServer} and checks every
 * byte against {@link BulkData}'s stream. Prints {@code RESULT ok=true|false bytes=.. seconds=.. mbps=..}.
 *
 * <pre>java dev.ccagent.it.kwik.FlupkeClient --port P --bytes N --seed S [--stall-seconds T]</pre>
 *
 * With {@code --stall-seconds T}: when no byte of the body has arrived for T seconds (the request included),
 * prints {@code STALLED bytes=.. seconds=T} and exits with 3, so that a test can retry a download that kwik's
 * own stream-send race stopped, instead of waiting for kwik's idle timeout.
 */
public final class FlupkeClient {

    private FlupkeClient() {
    }

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[1]);
        long bytes = Long.parseLong(args[3]);
        long seed = Long.parseLong(args[5]);
        int stallSeconds = args.length >= 8 && args[6].equals("--stall-seconds") ? Integer.parseInt(args[7]) : 0;
        AtomicLong received = new AtomicLong();
        if (stallSeconds > 0) {
            Thread watchdog = new Thread(() -> watch(received, stallSeconds), "stall-watchdog");
            watchdog.setDaemon(true);
            watchdog.start();
        }
        HttpClient client = Http3Client.newBuilder().disableCertificateCheck()
                .connectTimeout(Duration.ofSeconds(30)).build();
        HttpRequest request = HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + port + "/bytes/" + bytes
                + "/seed/" + seed)).timeout(Duration.ofSeconds(90)).build();
        long start = System.nanoTime();
        HttpResponse<InputStream> response = client.send(request, HttpResponse.BodyHandlers.ofInputStream());
        long count = 0;
        boolean ok = response.statusCode() == 200;
        byte[] got = new byte[32 * 1024];
        byte[] want = new byte[got.length];
        try (InputStream in = response.body()) {
            int n;
            while ((n = in.read(got)) > 0) {
                BulkData.fill(seed, count, want, 0, n);
                if (!Arrays.equals(got, 0, n, want, 0, n)) {
                    ok = false;
                }
                count += n;
                received.set(count);
            }
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        ok &= count == bytes;
        System.out.printf(Locale.ROOT, "RESULT ok=%s bytes=%d seconds=%.3f mbps=%.2f status=%d%n", ok, count, seconds,
                count * 8 / seconds / 1e6, response.statusCode());
        System.exit(ok ? 0 : 1);
    }

    /** Exits with 3 once {@code received} has not moved for {@code seconds}. */
    private static void watch(AtomicLong received, int seconds) {
        long last = -1;
        long since = System.nanoTime();
        while (true) {
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                return;
            }
            long now = System.nanoTime();
            long r = received.get();
            if (r != last) {
                last = r;
                since = now;
            } else if (now - since >= seconds * 1_000_000_000L) {
                System.out.printf(Locale.ROOT, "STALLED bytes=%d seconds=%d%n", r, seconds);
                System.out.flush();
                Runtime.getRuntime().halt(3);
            }
        }
    }
}
