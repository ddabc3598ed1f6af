package dev.ccagent.it.jfr;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** Async-profiler flame-graph HTML files: waiting for one, and its frame names (its constant pool is prefix-compressed). */
final class FlameGraphs {

    /**
     * The first file in {@code dir} whose name ends with {@code suffix}, once it is not empty (then 500 ms more,
     * to let the converter finish writing it); null if none came within {@code seconds}.
     */
    static Path awaitFile(Path dir, String suffix, int seconds) throws Exception {
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        while (System.nanoTime() < deadline) {
            if (Files.isDirectory(dir)) {
                try (Stream<Path> files = Files.list(dir)) {
                    Path p = files.filter(f -> f.toString().endsWith(suffix)).findFirst().orElse(null);
                    if (p != null && Files.size(p) > 0) {
                        Thread.sleep(500);
                        return p;
                    }
                }
            }
            Thread.sleep(200);
        }
        return null;
    }

    static List<String> frames(Path html) throws IOException {
        String s = Files.readString(html);
        int start = s.indexOf("const cpool = [");
        if (start < 0) {
            throw new IOException(html + ": no constant pool: not an async-profiler flame graph");
        }
        int i = start + "const cpool = [".length();
        int end = s.indexOf("];", i);
        List<String> out = new ArrayList<>();
        String prev = "";
        while (i < end) {
            int q = s.indexOf('\'', i);
            if (q < 0 || q > end) {
                break;
            }
            StringBuilder sb = new StringBuilder();
            int j = q + 1;
            for (; s.charAt(j) != '\''; j++) {
                char c = s.charAt(j);
                if (c == '\\') {
                    c = s.charAt(++j);
                }
                sb.append(c);
            }
            i = j + 1;
            String item = sb.toString();
            if (out.isEmpty()) {
                prev = item;
            } else {
                prev = prev.substring(0, Math.min(prev.length(), item.charAt(0) - 32)) + item.substring(1);
            }
            out.add(prev);
        }
        return out;
    }
}
