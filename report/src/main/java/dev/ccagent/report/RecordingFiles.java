package dev.ccagent.report;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The files a report reads: every named file, and every *.jfr under each named directory (recursively,
 * in name order); a file named twice is listed once, and files of identical content are marked
 * duplicates of the first (they are one recording). Missing, empty and unlistable inputs carry their
 * problem.
 */
final class RecordingFiles {

    private RecordingFiles() {
    }

    /** The inputs of {@code paths}, duplicates marked. */
    static List<FleetReport.Input> of(List<Path> paths) {
        List<FleetReport.Input> inputs = collect(paths);
        markDuplicateFiles(inputs);
        return inputs;
    }

    private static List<FleetReport.Input> collect(List<Path> paths) {
        List<FleetReport.Input> inputs = new ArrayList<>();
        Set<Path> seen = new HashSet<>();
        for (Path p : paths) {
            if (Files.isDirectory(p)) {
                List<Path> files;
                try (Stream<Path> walk = Files.walk(p)) {
                    files = walk.filter(f -> f.getFileName().toString().endsWith(".jfr") && Files.isRegularFile(f))
                            .sorted().collect(Collectors.toList());
                } catch (IOException | RuntimeException e) {
                    FleetReport.Input in = new FleetReport.Input(p);
                    in.problem = "cannot list the directory: " + e.getMessage();
                    inputs.add(in);
                    continue;
                }
                if (files.isEmpty()) {
                    FleetReport.Input in = new FleetReport.Input(p);
                    in.problem = "directory holds no .jfr files";
                    inputs.add(in);
                }
                for (Path f : files) {
                    add(inputs, f, seen);
                }
            } else {
                add(inputs, p, seen);
            }
        }
        return inputs;
    }

    private static void add(List<FleetReport.Input> inputs, Path p, Set<Path> seen) {
        FleetReport.Input in = new FleetReport.Input(p);
        if (!Files.exists(p)) {
            in.problem = "no such file or directory";
            inputs.add(in);
            return;
        }
        Path real;
        try {
            real = p.toRealPath();
        } catch (IOException e) {
            real = p.toAbsolutePath().normalize();
        }
        if (!seen.add(real)) {
            return; // the same file named twice (or inside a directory also named): read once, silently
        }
        try {
            if (Files.size(p) == 0) {
                in.problem = "empty file (0 bytes): the JVM may have stopped before the recording was written";
            }
        } catch (IOException e) {
            in.problem = "cannot read: " + e.getMessage();
        }
        inputs.add(in);
    }

    /** Files of equal size and equal SHA-256 are one recording: the later ones are marked duplicates. */
    private static void markDuplicateFiles(List<FleetReport.Input> inputs) {
        Map<Long, List<FleetReport.Input>> bySize = new HashMap<>();
        for (FleetReport.Input in : inputs) {
            if (in.problem == null) {
                try {
                    bySize.computeIfAbsent(Files.size(in.path), k -> new ArrayList<>()).add(in);
                } catch (IOException e) {
                    in.problem = "cannot read: " + e.getMessage();
                }
            }
        }
        for (List<FleetReport.Input> group : bySize.values()) {
            if (group.size() < 2) {
                continue;
            }
            Map<String, FleetReport.Input> byHash = new HashMap<>();
            for (FleetReport.Input in : group) {
                String hash;
                try {
                    hash = sha256(in.path);
                } catch (IOException e) {
                    in.problem = "cannot read: " + e.getMessage();
                    continue;
                }
                FleetReport.Input first = byHash.putIfAbsent(hash, in);
                if (first != null) {
                    in.duplicateOf = first.path;
                }
            }
        }
    }

    private static String sha256(Path p) throws IOException {
        MessageDigest md;
        try {
            md = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        byte[] buf = new byte[1 << 16];
        try (InputStream in = Files.newInputStream(p)) {
            int n;
            while ((n = in.read(buf)) > 0) {
                md.update(buf, 0, n);
            }
        }
        return java.util.HexFormat.of().formatHex(md.digest());
    }
}
