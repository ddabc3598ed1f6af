package dev.ccagent.it;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A command-line program from a Debian package, for the measurements that need a peer written by someone else
 * (ngtcp2's HTTP/3 client and server). Found on the {@code PATH} (and in {@code /usr/sbin}, {@code /sbin}) when
 * the package is installed; otherwise fetched by {@link #find}: {@code apt-get download} of the package and of
 * each library package it depends on that is not installed, unpacked with {@code dpkg-deb -x} into a directory
 * the caller names (a build's {@code target/}), and run from there with those libraries first on
 * {@code LD_LIBRARY_PATH}. Nothing is installed into the system: no root needed, no package's service started
 * (ngtcp2-server's package enables a systemd service that serves on port 7777).
 */
public final class DebianTool {

    private static final long STEP_SECONDS = 120;

    private final Path binary;
    private final String libraryPath;

    private DebianTool(Path binary, String libraryPath) {
        this.binary = binary;
        this.libraryPath = libraryPath;
    }

    /** The program's path. */
    public Path binary() {
        return binary;
    }

    /** Where it came from: the installed package or the unpacked one, for log lines. */
    @Override
    public String toString() {
        return binary + (libraryPath.isEmpty() ? "" : " (unpacked, libraries from " + libraryPath + ")");
    }

    /** A process builder for the program with {@code args}, its library path set when it was unpacked. */
    public ProcessBuilder command(List<String> args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(binary.toString());
        cmd.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(cmd);
        if (!libraryPath.isEmpty()) {
            Map<String, String> env = pb.environment();
            String old = env.getOrDefault("LD_LIBRARY_PATH", "");
            env.put("LD_LIBRARY_PATH", old.isEmpty() ? libraryPath : libraryPath + File.pathSeparator + old);
        }
        return pb;
    }

    /**
     * {@code program} from Debian's {@code debianPackage}: the installed one, else one unpacked under
     * {@code cacheDir/debianPackage} (fetched there on first use).
     *
     * @throws IllegalStateException naming the package and {@code apt-get install} when neither works
     */
    public static DebianTool find(String program, String debianPackage, Path cacheDir) {
        Path installed = onPath(program);
        if (installed != null) {
            return new DebianTool(installed, "");
        }
        Path root = cacheDir.toAbsolutePath().resolve(debianPackage);
        try {
            if (unpackedBinary(root, program) == null) {
                fetch(debianPackage, root);
            }
            Path unpacked = unpackedBinary(root, program);
            if (unpacked == null) {
                throw new IOException("package " + debianPackage + " has no program " + program);
            }
            DebianTool tool = new DebianTool(unpacked, libraryDirectories(root));
            tool.checkRuns();
            return tool;
        } catch (IOException e) {
            throw new IllegalStateException(program + " (from Debian's " + debianPackage + ") is not installed and "
                    + "could not be fetched into " + root + ": " + e.getMessage() + "; install it: apt-get install "
                    + debianPackage, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while fetching " + debianPackage, e);
        }
    }

    /** {@code program} on the PATH or in the system directories a non-root PATH leaves out. */
    static Path onPath(String program) {
        Set<String> dirs = new LinkedHashSet<>(List.of(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)));
        dirs.addAll(List.of("/usr/sbin", "/sbin", "/usr/bin"));
        for (String d : dirs) {
            if (d.isEmpty()) {
                continue;
            }
            Path p = Path.of(d, program);
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        return null;
    }

    private static Path unpackedBinary(Path root, String program) {
        for (String d : List.of("usr/bin", "usr/sbin", "bin", "sbin")) {
            Path p = root.resolve("files").resolve(d).resolve(program);
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        return null;
    }

    /**
     * Downloads {@code debianPackage} and the packages it depends on that are not installed into
     * {@code root/debs}, then unpacks them all into {@code root/files}.
     */
    private static void fetch(String debianPackage, Path root) throws IOException, InterruptedException {
        Path debs = root.resolve("debs");
        Files.createDirectories(debs);
        run(debs, List.of("apt-get", "download", debianPackage));
        Path main = onlyDeb(debs, debianPackage);
        List<String> missing = new ArrayList<>();
        for (String dep : dependencies(run(debs, List.of("dpkg-deb", "-f", main.toString(), "Depends")))) {
            if (!installed(dep)) {
                missing.add(dep);
            }
        }
        if (!missing.isEmpty()) {
            List<String> cmd = new ArrayList<>(List.of("apt-get", "download"));
            cmd.addAll(missing);
            run(debs, cmd);
        }
        Path files = root.resolve("files");
        Files.createDirectories(files);
        try (Stream<Path> all = Files.list(debs)) {
            for (Path deb : all.filter(p -> p.toString().endsWith(".deb")).sorted().toList()) {
                run(debs, List.of("dpkg-deb", "-x", deb.toString(), files.toString()));
            }
        }
    }

    private static Path onlyDeb(Path debs, String debianPackage) throws IOException {
        try (Stream<Path> all = Files.list(debs)) {
            return all.filter(p -> p.getFileName().toString().startsWith(debianPackage + "_")).findFirst()
                    .orElseThrow(() -> new IOException("apt-get download left no " + debianPackage + "_*.deb in " + debs));
        }
    }

    /** Package names of a {@code Depends} field ("a (>= 1), b | c" gives a, b: the first of each alternative). */
    static List<String> dependencies(String dependsField) {
        List<String> out = new ArrayList<>();
        for (String part : dependsField.split(",")) {
            String first = part.split("\\|")[0].trim();
            String name = first.split("[\\s(:]")[0].trim();
            if (!name.isEmpty()) {
                out.add(name);
            }
        }
        return out;
    }

    private static boolean installed(String debianPackage) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("dpkg-query", "-W", "-f=${Status}", debianPackage).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        return p.waitFor() == 0 && out.contains("install ok installed");
    }

    /** Every directory under {@code root/files} that holds a shared library, joined for LD_LIBRARY_PATH. */
    private static String libraryDirectories(Path root) throws IOException {
        Set<String> dirs = new LinkedHashSet<>();
        try (Stream<Path> all = Files.walk(root.resolve("files"))) {
            all.filter(p -> p.getFileName().toString().contains(".so")).sorted(Comparator.naturalOrder())
                    .forEach(p -> dirs.add(p.getParent().toString()));
        }
        return String.join(File.pathSeparator, dirs);
    }

    /** Runs {@code --help} once: an unpacked program whose libraries are missing fails here, not mid-measurement. */
    private void checkRuns() throws IOException, InterruptedException {
        Process p = command(List.of("--help")).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(STEP_SECONDS, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IOException(binary + " --help did not run: " + out.strip().lines().findFirst().orElse("no output"));
        }
    }

    private static String run(Path dir, List<String> cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(STEP_SECONDS, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IOException(String.join(" ", cmd) + " failed: " + out.strip());
        }
        return out;
    }
}
