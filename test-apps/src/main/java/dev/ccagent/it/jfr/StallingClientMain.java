package dev.ccagent.it.jfr;

import tech.kwik.core.QuicClientConnection;
import tech.kwik.core.QuicStream;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.time.Duration;

/**
 * A stock kwik client that stops reading: it sends a request, reads {@code BEFORE} bytes of the
 * answer, prints "paused", reads nothing for {@code PAUSE} ms (its stream's flow-control window,
 * 256 kB, fills up and the server is blocked), then either reads the rest ("resume": checks the
 * {@code (byte) (offset % 251)} pattern, prints "answered N ok|corrupt") or closes the connection
 * ("close"). Mode "idle" opens no stream: it holds the connection for {@code PAUSE} ms and closes.
 * Usage: {@code StallingClientMain PORT BEFORE PAUSE resume|close|idle [PROTOCOL [RECEIVE_BUFFER]]}; RECEIVE_BUFFER (bytes,
 * default 256000) is the stream's flow-control window: one larger than the answer never blocks the server.
 */
public final class StallingClientMain {

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        long before = Long.parseLong(args[1]);
        long pause = Long.parseLong(args[2]);
        boolean resume = args[3].equals("resume");
        QuicClientConnection conn = QuicClientConnection.newBuilder()
                .uri(URI.create("https://127.0.0.1:" + port))
                .applicationProtocol(args.length > 4 ? args[4] : "spin")
                .noServerCertificateCheck()
                .connectTimeout(Duration.ofSeconds(10))
                .maxIdleTimeout(Duration.ofSeconds(30))
                .defaultStreamReceiveBufferSize(args.length > 5 ? Long.parseLong(args[5]) : 256_000L)
                .build();
        conn.connect();
        System.out.println("connected");
        if (args[3].equals("idle")) { // an idle connection: no stream at all
            Thread.sleep(pause);
            conn.close();
            System.out.println("closed");
            System.out.flush();
            System.exit(0);
        }
        QuicStream s = conn.createStream(true);
        OutputStream out = s.getOutputStream();
        out.write("request".getBytes());
        out.close();
        InputStream in = s.getInputStream();
        byte[] buf = new byte[16 * 1024];
        long offset = 0;
        boolean intact = true;
        while (offset < before) {
            int n = in.read(buf, 0, (int) Math.min(buf.length, before - offset));
            if (n < 0) {
                break;
            }
            for (int i = 0; i < n; i++) {
                intact &= buf[i] == (byte) ((offset + i) % 251);
            }
            offset += n;
        }
        System.out.println("paused " + offset);
        System.out.flush();
        Thread.sleep(pause);
        if (!resume) {
            conn.close();
            System.out.println("closed");
            System.out.flush();
            System.exit(0);
        }
        System.out.println("resumed " + System.currentTimeMillis()); // the instant, for a test that reads it later
        System.out.flush();
        for (int n; (n = in.read(buf)) >= 0; ) {
            for (int i = 0; i < n; i++) {
                intact &= buf[i] == (byte) ((offset + i) % 251);
            }
            offset += n;
        }
        System.out.println("answered " + offset + (intact ? " ok" : " corrupt"));
        System.out.flush();
        conn.close();
        System.exit(0);
    }
}
