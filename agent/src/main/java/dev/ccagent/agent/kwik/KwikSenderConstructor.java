package dev.ccagent.agent.kwik;

import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.asm.AsmVisitorWrapper;
import net.bytebuddy.description.method.MethodDescription;
import net.bytebuddy.description.method.ParameterDescription;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.ClassFileLocator;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import static net.bytebuddy.matcher.ElementMatchers.is;

/**
 * Finds {@code SenderImpl}'s designated constructor and its connection-id and packet-size
 * parameters by type, not by position. kwik 0.10.x has
 * {@code (Clock, VersionHolder, int maxPacketSize, DatagramSocket, InetSocketAddress, QuicConnectionImpl,
 * String id, Integer initialRtt, Logger)}; kwik's main branch (2026) replaces the socket and address by
 * one {@code SocketManager}, so the id moves from index 6 to 5 in an 8-argument constructor.
 *
 * <p>The designated constructor is the one whose first parameter is a {@code java.time.Clock} (the
 * other constructors delegate to it, so advice there would run twice), or the only constructor; it
 * must have exactly one {@code String} (the hex connection id) and exactly one {@code int} (the
 * maximum packet size). The advice binds them with {@link Id} and {@link MaxPacketSize}.
 */
final class KwikSenderConstructor {

    /** Binds the connection-id parameter (a String) of the designated constructor. */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.PARAMETER)
    @interface Id {
    }

    /** Binds the maximum-packet-size parameter (an int) of the designated constructor. */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.PARAMETER)
    @interface MaxPacketSize {
    }

    final MethodDescription.InDefinedShape constructor;
    final ParameterDescription.InDefinedShape id;
    final ParameterDescription.InDefinedShape maxPacketSize;

    private KwikSenderConstructor(MethodDescription.InDefinedShape constructor, ParameterDescription.InDefinedShape id,
                                  ParameterDescription.InDefinedShape maxPacketSize) {
        this.constructor = constructor;
        this.id = id;
        this.maxPacketSize = maxPacketSize;
    }

    /** The shape in {@code senderImpl}; null when it has none we recognise (see {@link #problem}). */
    static KwikSenderConstructor find(TypeDescription senderImpl) {
        MethodDescription.InDefinedShape designated = designated(senderImpl);
        if (designated == null) {
            return null;
        }
        ParameterDescription.InDefinedShape id = null;
        ParameterDescription.InDefinedShape size = null;
        int strings = 0;
        int ints = 0;
        for (ParameterDescription.InDefinedShape p : designated.getParameters()) {
            TypeDescription t = p.getType().asErasure();
            if (t.represents(String.class)) {
                strings++;
                id = p;
            } else if (t.represents(int.class)) {
                ints++;
                size = p;
            }
        }
        return strings == 1 && ints == 1 ? new KwikSenderConstructor(designated, id, size) : null;
    }

    /** Why {@link #find} finds nothing; null when it finds the shape. */
    static String problem(TypeDescription senderImpl) {
        if (find(senderImpl) != null) {
            return null;
        }
        MethodDescription.InDefinedShape designated = designated(senderImpl);
        if (designated == null) {
            return "no constructor " + senderImpl.getName() + "(java.time.Clock, ...) (and not exactly one constructor)";
        }
        return "constructor " + designated + " does not have exactly one String (connection id) and one int"
                + " (maximum packet size) parameter";
    }

    private static MethodDescription.InDefinedShape designated(TypeDescription senderImpl) {
        MethodDescription.InDefinedShape withClock = null;
        MethodDescription.InDefinedShape only = null;
        int constructors = 0;
        for (MethodDescription.InDefinedShape m : senderImpl.getDeclaredMethods()) {
            if (!m.isConstructor()) {
                continue;
            }
            constructors++;
            only = m;
            if (!m.getParameters().isEmpty()
                    && m.getParameters().get(0).getType().asErasure().getName().equals("java.time.Clock")) {
                if (withClock != null) {
                    return null; // ambiguous
                }
                withClock = m;
            }
        }
        return withClock != null ? withClock : constructors == 1 ? only : null;
    }

    /**
     * Puts {@code advice} on SenderImpl's designated constructor, its class file read from the agent's loader;
     * a SenderImpl without one is left as it is (the requirement check already said why).
     */
    static AgentBuilder.Transformer transformer(Class<?> advice) {
        return (typeBuilder, type, loader, module, domain) -> {
            KwikSenderConstructor shape = find(type);
            return shape == null ? typeBuilder
                    : typeBuilder.visit(shape.advice(advice, ClassFileLocator.ForClassLoader.of(advice.getClassLoader())));
        };
    }

    /** {@code advice} (using {@link Id} and {@link MaxPacketSize}) on exit of the designated constructor. */
    AsmVisitorWrapper advice(Class<?> advice, ClassFileLocator locator) {
        return Advice.withCustomMapping()
                .bind(Id.class, id)
                .bind(MaxPacketSize.class, maxPacketSize)
                .to(TypeDescription.ForLoadedType.of(advice), locator)
                .on(is(constructor));
    }
}
