package dev.ccagent.it;

import net.bytebuddy.jar.asm.ClassReader;
import net.bytebuddy.jar.asm.ClassWriter;
import net.bytebuddy.jar.asm.commons.ClassRemapper;
import net.bytebuddy.jar.asm.commons.Remapper;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Enumeration;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;

/**
 * A library jar as a release that changed one of its members would have it: a copy of the jar whose one class is
 * rewritten by {@code remapper} (a member renamed together with every access to it, so that the library itself
 * still works), the jar's signature files left out. The tests that check what the agent says and does where a
 * member it needs is gone use it ({@code KwikMissingMemberTest}, {@code NettyLoopSpinTest}'s observe-only run).
 */
public final class RenamedMember {

    private RenamedMember() {
    }

    /** Copies {@code in} to {@code out}, {@code className} (internal name) rewritten; returns the classes rewritten. */
    public static int copy(Path in, Path out, String className, Remapper remapper) throws Exception {
        int n = 0;
        try (JarFile jar = new JarFile(in.toFile());
             JarOutputStream os = new JarOutputStream(Files.newOutputStream(out))) {
            for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements(); ) {
                JarEntry entry = e.nextElement();
                if (entry.getName().startsWith("META-INF/") && (entry.getName().endsWith(".SF")
                        || entry.getName().endsWith(".RSA") || entry.getName().endsWith(".EC"))) {
                    continue;
                }
                byte[] bytes;
                try (InputStream is = jar.getInputStream(entry)) {
                    bytes = is.readAllBytes();
                }
                if (entry.getName().equals(className + ".class")) {
                    ClassReader reader = new ClassReader(bytes);
                    ClassWriter writer = new ClassWriter(0);
                    reader.accept(new ClassRemapper(writer, remapper), 0);
                    bytes = writer.toByteArray();
                    n++;
                }
                os.putNextEntry(new JarEntry(entry.getName()));
                os.write(bytes);
                os.closeEntry();
            }
        }
        return n;
    }
}
