package dev.ccagent.agent.netty;

import net.bytebuddy.asm.AsmVisitorWrapper;
import net.bytebuddy.description.field.FieldDescription;
import net.bytebuddy.description.field.FieldList;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.description.method.MethodList;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.implementation.Implementation;
import net.bytebuddy.jar.asm.ClassVisitor;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.pool.TypePool;
import net.bytebuddy.utility.OpenedClassReader;

import java.util.HashMap;
import java.util.Map;

/**
 * Applies a method-body wrapper (a {@link net.bytebuddy.asm.MemberSubstitution}) to the synthetic
 * {@code lambda$...} methods of a class too: Byte Buddy's {@code on(...)} skips synthetic methods,
 * and Netty creates its quiche connections inside lambdas.
 */
final class LambdaBodies extends AsmVisitorWrapper.AbstractBase {

    private final AsmVisitorWrapper.ForDeclaredMethods.MethodVisitorWrapper wrapper;

    LambdaBodies(AsmVisitorWrapper.ForDeclaredMethods.MethodVisitorWrapper wrapper) {
        this.wrapper = wrapper;
    }

    @Override
    public ClassVisitor wrap(TypeDescription instrumentedType, ClassVisitor classVisitor,
                             Implementation.Context implementationContext, TypePool typePool,
                             FieldList<FieldDescription.InDefinedShape> fields, MethodList<?> methods,
                             int writerFlags, int readerFlags) {
        Map<String, MethodDescription> byKey = new HashMap<>();
        for (MethodDescription m : instrumentedType.getDeclaredMethods()) {
            if (m.getInternalName().startsWith("lambda$")) {
                byKey.put(m.getInternalName() + m.getDescriptor(), m);
            }
        }
        return new ClassVisitor(OpenedClassReader.ASM_API, classVisitor) {
            @Override
            public MethodVisitor visitMethod(int access, String name, String descriptor, String signature,
                                             String[] exceptions) {
                MethodVisitor mv = super.visitMethod(access, name, descriptor, signature, exceptions);
                MethodDescription m = byKey.get(name + descriptor);
                if (mv == null || m == null) {
                    return mv;
                }
                return wrapper.wrap(instrumentedType, m, mv, implementationContext, typePool, writerFlags, readerFlags);
            }
        };
    }
}
