package dev.ccagent.agent.kwik;

import net.bytebuddy.ByteBuddy;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.modifier.Visibility;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.ClassFileLocator;
import net.bytebuddy.dynamic.DynamicType;
import net.bytebuddy.dynamic.loading.ClassLoadingStrategy;
import net.bytebuddy.implementation.MethodCall;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Constructor;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.time.Clock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code SenderImpl}'s constructor is matched by parameter type: the kwik 0.10.x shape (9 arguments,
 * id at index 6) and the main-branch shape (8 arguments: {@code SocketManager} replaces the socket
 * and the peer address, so the id is at index 5; read from kwik's main branch, 2026-08) both bind
 * the right id and packet size. The classes are synthetic, generated here with those shapes.
 */
class KwikSenderConstructorTest {

    /** Records what the advice bound (the production advice hands the same bindings to KwikHooks). */
    public static final class RecordingAdvice {
        public static volatile String id;
        public static volatile int maxPacketSize;

        @Advice.OnMethodExit
        static void exit(@KwikSenderConstructor.MaxPacketSize int size, @KwikSenderConstructor.Id String connectionId) {
            id = connectionId;
            maxPacketSize = size;
        }
    }

    /** A stand-in for a kwik type the synthetic constructors take (only String, int and Clock matter). */
    public interface Stand {
    }

    static DynamicType.Builder<Object> sender(String name, Class<?>... designated) throws Exception {
        Constructor<Object> object = Object.class.getConstructor();
        Class<?>[] delegating = new Class<?>[designated.length - 1];
        System.arraycopy(designated, 1, delegating, 0, delegating.length);
        return new ByteBuddy().subclass(Object.class, net.bytebuddy.dynamic.scaffold.subclass.ConstructorStrategy.Default.NO_CONSTRUCTORS)
                .name(name)
                .defineConstructor(Visibility.PUBLIC).withParameters(delegating).intercept(MethodCall.invoke(object))
                .defineConstructor(Visibility.PUBLIC).withParameters(designated).intercept(MethodCall.invoke(object));
    }

    /** kwik's main branch: (Clock, VersionHolder, int maxPacketSize, SocketManager, QuicConnectionImpl, String id, Integer, Logger). */
    static final Class<?>[] MAIN = {Clock.class, Stand.class, int.class, Stand.class, Stand.class, String.class,
            Integer.class, Stand.class};
    /** kwik 0.10.x: (Clock, VersionHolder, int, DatagramSocket, InetSocketAddress, QuicConnectionImpl, String id, Integer, Logger). */
    static final Class<?>[] V010 = {Clock.class, Stand.class, int.class, DatagramSocket.class, InetSocketAddress.class,
            Stand.class, String.class, Integer.class, Stand.class};

    @Test
    void findsTheParametersByTypeInBothShapes() throws Exception {
        for (Class<?>[] shape : new Class<?>[][] {MAIN, V010}) {
            TypeDescription type = sender("synthetic.SenderImpl" + shape.length, shape).make().getTypeDescription();
            KwikSenderConstructor c = KwikSenderConstructor.find(type);
            assertNotNull(c, KwikSenderConstructor.problem(type));
            assertEquals(shape.length, c.constructor.getParameters().size(), "the Clock constructor, not the delegating one");
            assertEquals(shape == MAIN ? 5 : 6, c.id.getIndex());
            assertEquals(2, c.maxPacketSize.getIndex());
            assertNull(KwikSenderConstructor.problem(type));
        }
    }

    @Test
    void theAdviceReceivesTheIdAndPacketSizeOfTheMainBranchShape() throws Exception {
        for (Class<?>[] shape : new Class<?>[][] {MAIN, V010}) {
            DynamicType.Builder<Object> builder = sender("synthetic.AdvisedSenderImpl" + shape.length, shape);
            TypeDescription type = builder.make().getTypeDescription();
            KwikSenderConstructor c = KwikSenderConstructor.find(type);
            Class<?> loaded = builder.visit(c.advice(RecordingAdvice.class, ClassFileLocator.ForClassLoader.of(
                            RecordingAdvice.class.getClassLoader())))
                    .make()
                    .load(getClass().getClassLoader(), ClassLoadingStrategy.Default.WRAPPER)
                    .getLoaded();
            Object[] args = new Object[shape.length];
            for (int i = 0; i < shape.length; i++) {
                args[i] = shape[i] == int.class ? 1252 : shape[i] == String.class ? "c0ffee" + shape.length
                        : shape[i] == Integer.class ? Integer.valueOf(77) : null;
            }
            RecordingAdvice.id = null;
            loaded.getConstructor(shape).newInstance(args);
            assertEquals("c0ffee" + shape.length, RecordingAdvice.id);
            assertEquals(1252, RecordingAdvice.maxPacketSize);
        }
    }

    @Test
    void anUnrecognisedShapeIsNamed() throws Exception {
        TypeDescription twoStrings = sender("synthetic.TwoStrings", Clock.class, String.class, String.class, int.class)
                .make().getTypeDescription();
        assertNull(KwikSenderConstructor.find(twoStrings));
        String problem = KwikSenderConstructor.problem(twoStrings);
        assertTrue(problem.contains("exactly one String"), problem);
    }
}
