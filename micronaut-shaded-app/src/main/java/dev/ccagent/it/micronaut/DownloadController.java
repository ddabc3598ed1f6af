package dev.ccagent.it.micronaut;

import io.micronaut.http.MediaType;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Get;
import io.micronaut.http.annotation.QueryValue;
import io.micronaut.http.server.types.files.StreamedFile;

/**
 * {@code GET /bytes?n=N[&seed=S]}: N bytes of BulkData's seeded stream (default seed 1) with their content
 * length, the contract of the other packaged HTTP/3 servers, so one client checks them all by SHA-256. The body
 * is a {@link StreamedFile} over {@link BulkDataStream}: Micronaut reads it as the response's stream has room.
 */
@Controller
public class DownloadController {

    @Get(uri = "/bytes", produces = MediaType.APPLICATION_OCTET_STREAM)
    public StreamedFile bytes(@QueryValue("n") long n, @QueryValue(value = "seed", defaultValue = "1") long seed) {
        return new StreamedFile(new BulkDataStream(seed, n), MediaType.APPLICATION_OCTET_STREAM_TYPE, 0, n);
    }
}
