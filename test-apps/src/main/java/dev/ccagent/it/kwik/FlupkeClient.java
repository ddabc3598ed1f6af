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

/**
 * flupke's HTTP/3 client: downloads {@code /bytes/N/seed/S} from {@link FlupkeServer} and checks every
 * byte against {@link BulkData}'s stream. Prints {@code RESULT ok=true|false bytes=.. seconds=.. mbps=..}.
 *
 * <pre>java dev.ccagent.it.kwik.FlupkeClient --port P --bytes N --seed S</pre>
 */
public final class FlupkeClient {

    private FlupkeClient() {
    }

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[1]);
        long bytes = Long.parseLong(args[3]);
        long seed = Long.parseLong(args[5]);
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
            }
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        ok &= count == bytes;
        System.out.printf(Locale.ROOT, "RESULT ok=%s bytes=%d seconds=%.3f mbps=%.2f status=%d%n", ok, count, seconds,
                count * 8 / seconds / 1e6, response.statusCode());
        System.exit(ok ? 0 : 1);
    }
}
