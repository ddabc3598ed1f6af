package dev.ccagent.agent.instrument;

import net.bytebuddy.description.field.FieldDescription;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.ClassFileLocator;
import net.bytebuddy.jar.asm.ClassVisitor;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;
import net.bytebuddy.pool.TypePool;
import net.bytebuddy.utility.OpenedClassReader;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * A type a target module's advice depends on, with the fields and methods it uses, checked by
 * descriptor against the class files a class loader would load, without loading them (the idea
 * of OpenTelemetry's muzzle).
 */
public final class Requirement {

    private final String typeName;
    /** What a missing type means, when it is not the library's ("class X not found" otherwise). */
    private String whenMissing;
    private final List<String[]> fields = new ArrayList<>();
    private final List<String[]> methods = new ArrayList<>();
    private final List<java.util.function.Function<TypeDescription, String>> checks = new ArrayList<>();
    private final List<CodeCheck> codeChecks = new ArrayList<>();

    /** A check of one declared method's instructions (see {@link #code}). */
    private static final class CodeCheck {
        final String method;
        final String descriptor;
        final java.util.function.Function<List<String>, String> check;

        CodeCheck(String method, String descriptor, java.util.function.Function<List<String>, String> check) {
            this.method = method;
            this.descriptor = descriptor;
            this.check = check;
        }
    }

    private Requirement(String typeName) {
        this.typeName = typeName;
    }

    public static Requirement type(String name) {
        return new Requirement(name);
    }

    /**
     * One of the agent's own classes that the advice names, which the instrumented library's class loader must
     * resolve: kwik or Netty on the application class path or in a loader that delegates to it. Missing, it says
     * why: the loader does not delegate to the application class loader, where the agent is (a loader whose
     * parent is the platform loader, an OSGi bundle's).
     */
    public static Requirement agentType(String name) {
        Requirement r = new Requirement(name);
        r.whenMissing = "the agent's classes are not visible from this class loader (" + name + " not found: the"
                + " loader does not delegate to the application class loader, where the agent is)";
        return r;
    }

    /** A field declared by this type, e.g. {@code field("sender", "Ltech/kwik/core/send/Sender;")}. */
    public Requirement field(String name, String descriptor) {
        fields.add(new String[] {name, descriptor});
        return this;
    }

    /** A method or constructor ({@code <init>}) declared by this type or inherited from a superclass. */
    public Requirement method(String name, String descriptor) {
        methods.add(new String[] {name, descriptor});
        return this;
    }

    /**
     * A check of the type's shape that descriptors cannot express (e.g. a constructor matched by
     * parameter types, not positions): returns null when it holds, else what is missing.
     */
    public Requirement satisfies(java.util.function.Function<TypeDescription, String> check) {
        checks.add(check);
        return this;
    }

    /**
     * A check of what one method declared by this type does, for a patch that rewrites instructions
     * (its signature alone does not say the patch fits): {@code check} gets the method's field reads and
     * calls in order, as {@code "getfield owner.name"} and {@code "call owner.name descriptor"} (internal
     * names), read from the class file without loading it, and returns null when they fit, else what
     * differs. A method that is absent is reported as such.
     */
    public Requirement code(String method, String descriptor, java.util.function.Function<List<String>, String> check) {
        codeChecks.add(new CodeCheck(method, descriptor, check));
        return this;
    }

    public String typeName() {
        return typeName;
    }

    /**
     * What of {@code requirements} is missing in {@code loader}'s class files (empty: all there), one
     * line each; for a check a module needs beside its own requirements.
     */
    public static List<String> missingIn(List<Requirement> requirements, ClassLoader loader) {
        ClassFileLocator classFiles = classFilesOf(loader);
        return missingIn(requirements, TypePool.Default.of(classFiles), classFiles);
    }

    /** What of {@code requirements} is missing in {@code pool} (read from {@code classFiles}), one line each. */
    static List<String> missingIn(List<Requirement> requirements, TypePool pool, ClassFileLocator classFiles) {
        List<String> missing = new ArrayList<>();
        for (Requirement r : requirements) {
            r.check(pool, classFiles, missing);
        }
        return missing;
    }

    /** The class files {@code loader} would load (null: the bootstrap loader), read without loading them. */
    static ClassFileLocator classFilesOf(ClassLoader loader) {
        return loader == null ? ClassFileLocator.ForClassLoader.ofBootLoader() : ClassFileLocator.ForClassLoader.of(loader);
    }

    /** Whether the type itself exists in the pool (the library is present), whatever its members. */
    boolean presentIn(TypePool pool) {
        return pool.describe(typeName).isResolved();
    }

    /** Adds a line per missing element to {@code missing}. */
    void check(TypePool pool, ClassFileLocator classFiles, List<String> missing) {
        TypePool.Resolution resolution = pool.describe(typeName);
        if (!resolution.isResolved()) {
            missing.add(whenMissing != null ? whenMissing : "class " + typeName + " not found");
            return;
        }
        TypeDescription type = resolution.resolve();
        for (String[] f : fields) {
            boolean found = false;
            for (FieldDescription.InDefinedShape d : type.getDeclaredFields()) {
                if (d.getName().equals(f[0]) && d.getDescriptor().equals(f[1])) {
                    found = true;
                    break;
                }
            }
            if (!found) {
                missing.add("field " + typeName + "." + f[0] + " " + f[1] + " not found");
            }
        }
        for (String[] m : methods) {
            if (!hasMethod(type, m[0], m[1])) {
                missing.add("method " + typeName + "." + m[0] + m[1] + " not found");
            }
        }
        for (java.util.function.Function<TypeDescription, String> c : checks) {
            String problem = c.apply(type);
            if (problem != null) {
                missing.add(problem);
            }
        }
        for (CodeCheck c : codeChecks) {
            String where = "method " + typeName + "." + c.method + c.descriptor;
            List<String> steps;
            try {
                steps = instructions(classFiles, c.method, c.descriptor);
            } catch (IOException | RuntimeException e) {
                missing.add(where + ": its class file could not be read (" + e + ")");
                continue;
            }
            if (steps == null) {
                missing.add(where + " not found");
                continue;
            }
            String problem = c.check.apply(steps);
            if (problem != null) {
                missing.add(where + ": " + problem);
            }
        }
    }

    /** The field reads and calls of one declared method, in order; null if the class does not declare it. */
    private List<String> instructions(ClassFileLocator classFiles, String method, String descriptor) throws IOException {
        ClassFileLocator.Resolution file = classFiles.locate(typeName);
        if (!file.isResolved()) {
            return null;
        }
        List<String> steps = new ArrayList<>();
        boolean[] found = new boolean[1];
        OpenedClassReader.of(file.resolve()).accept(new ClassVisitor(OpenedClassReader.ASM_API) {
            @Override
            public MethodVisitor visitMethod(int access, String name, String desc, String signature, String[] exceptions) {
                if (!name.equals(method) || !desc.equals(descriptor)) {
                    return null;
                }
                found[0] = true;
                return new MethodVisitor(OpenedClassReader.ASM_API) {
                    @Override
                    public void visitFieldInsn(int opcode, String owner, String field, String fieldDescriptor) {
                        if (opcode == Opcodes.GETFIELD) {
                            steps.add("getfield " + owner + "." + field);
                        }
                    }

                    @Override
                    public void visitMethodInsn(int opcode, String owner, String name, String desc, boolean isInterface) {
                        steps.add("call " + owner + "." + name + " " + desc);
                    }
                };
            }
        }, net.bytebuddy.jar.asm.ClassReader.SKIP_DEBUG | net.bytebuddy.jar.asm.ClassReader.SKIP_FRAMES);
        return found[0] ? steps : null;
    }

    private static boolean hasMethod(TypeDescription type, String name, String descriptor) {
        for (TypeDescription t = type; t != null; ) {
            for (MethodDescription.InDefinedShape d : t.getDeclaredMethods()) {
                if (d.getInternalName().equals(name) && d.getDescriptor().equals(descriptor)) {
                    return true;
                }
            }
            if (name.equals("<init>") || t.getSuperClass() == null) {
                return false;
            }
            t = t.getSuperClass().asErasure();
        }
        return false;
    }
}
