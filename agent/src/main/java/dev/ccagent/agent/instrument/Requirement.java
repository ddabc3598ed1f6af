package dev.ccagent.agent.instrument;

import net.bytebuddy.description.field.FieldDescription;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.pool.TypePool;

import java.util.ArrayList;
import java.util.List;

/**
 * A type a target module's advice depends on, with the fields and methods it uses, checked by
 * descriptor against the class files a class loader would load, without loading them (the idea
 * of OpenTelemetry's muzzle).
 */
public final class Requirement {

    private final String typeName;
    private final List<String[]> fields = new ArrayList<>();
    private final List<String[]> methods = new ArrayList<>();
    private final List<java.util.function.Function<TypeDescription, String>> checks = new ArrayList<>();

    private Requirement(String typeName) {
        this.typeName = typeName;
    }

    public static Requirement type(String name) {
        return new Requirement(name);
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

    public String typeName() {
        return typeName;
    }

    /**
     * What of {@code requirements} is missing in {@code loader}'s class files (empty: all there), one
     * line each; for a check a module needs beside its own requirements.
     */
    public static List<String> missingIn(List<Requirement> requirements, ClassLoader loader) {
        return missingIn(requirements, poolOf(loader));
    }

    /** What of {@code requirements} is missing in {@code pool}, one line each. */
    static List<String> missingIn(List<Requirement> requirements, TypePool pool) {
        List<String> missing = new ArrayList<>();
        for (Requirement r : requirements) {
            r.check(pool, missing);
        }
        return missing;
    }

    /** The class files {@code loader} would load (null: the bootstrap loader), described without loading them. */
    static TypePool poolOf(ClassLoader loader) {
        return TypePool.Default.of(loader == null ? net.bytebuddy.dynamic.ClassFileLocator.ForClassLoader.ofBootLoader()
                : net.bytebuddy.dynamic.ClassFileLocator.ForClassLoader.of(loader));
    }

    /** Whether the type itself exists in the pool (the library is present), whatever its members. */
    boolean presentIn(TypePool pool) {
        return pool.describe(typeName).isResolved();
    }

    /** Adds a line per missing element to {@code missing}. */
    void check(TypePool pool, List<String> missing) {
        TypePool.Resolution resolution = pool.describe(typeName);
        if (!resolution.isResolved()) {
            missing.add("class " + typeName + " not found");
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
