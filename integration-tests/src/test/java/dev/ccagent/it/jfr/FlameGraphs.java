package dev.ccagent.it.jfr;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Frame names of an async-profiler flame-graph HTML (its constant pool is prefix-compressed). */
final class FlameGraphs {

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
