import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.DatagramChannel;

/**
 * How often does an ephemeral UDP bind ({@code 0.0.0.0:0}) get the port of a server already bound on
 * {@code 127.0.0.1}? This is the cause of a Vert.x flake in docs/testing.md. Vert.x 5 sets SO_REUSEADDR on
 * both ends by default.
 *
 * <pre>java tools/scripts/UdpPortShareProbe.java SERVER_REUSE CLIENT_REUSE BINDS</pre>
 *
 * Example: {@code java tools/scripts/UdpPortShareProbe.java true true 300000}.
 * It prints how many of the client binds got the server's port.
 *
 * <p>Results on this machine (Linux 6.18, 2026-12-05), 300,000 binds each:
 * <ul>
 *   <li>both true: 10, and 9 in a second run;</li>
 *   <li>server false, client true: 0;</li>
 *   <li>both false: 0.</li>
 * </ul>
 * Ports 32768-60999 were available: 28,232 ports, so about 1 in 28,232 is expected when both sockets share.
 *
 * <p>The server channel is kept reachable until the end. Without that, the channel's cleaner closes it
 * after a GC and frees the port. An earlier version of this probe missed that: it counted hits even with
 * the option off.
 */
public class UdpPortShareProbe {

    public static void main(String[] args) throws Exception {
        boolean serverReuse = Boolean.parseBoolean(args[0]);
        boolean clientReuse = Boolean.parseBoolean(args[1]);
        int binds = Integer.parseInt(args[2]);
        DatagramChannel server = DatagramChannel.open();
        server.setOption(StandardSocketOptions.SO_REUSEADDR, serverReuse);
        server.bind(new InetSocketAddress("127.0.0.1", 0));
        int port = ((InetSocketAddress) server.getLocalAddress()).getPort();
        int shared = 0;
        for (int i = 0; i < binds; i++) {
            try (DatagramChannel client = DatagramChannel.open()) {
                client.setOption(StandardSocketOptions.SO_REUSEADDR, clientReuse);
                client.bind(new InetSocketAddress("0.0.0.0", 0));
                if (((InetSocketAddress) client.getLocalAddress()).getPort() == port) {
                    shared++;
                }
            }
        }
        System.out.println("server SO_REUSEADDR=" + serverReuse + " client SO_REUSEADDR=" + clientReuse
                + ": " + shared + " of " + binds + " ephemeral binds got the server's port " + port);
        server.close();
    }
}
