package dev.ccagent.agent.netty;

import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.MemberSubstitution;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.DynamicType;
import net.bytebuddy.utility.JavaModule;

import java.lang.reflect.Method;
import java.security.ProtectionDomain;

import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

/**
 * Replaces the calls of {@code Quiche.quiche_conn_new_with_tls[_and_client_dcid]} in the type (also
 * inside its lambdas, {@link LambdaBodies}) with {@link NettyHooks#connNew} and
 * {@link NettyHooks#connNewClientDcid}: set the chosen algorithm on the shared native config, create,
 * restore, all on the same event-loop thread. {@code Quiche} is resolved through Netty's own loader.
 */
final class QuicheConnNewSubstitution implements AgentBuilder.Transformer {

    private static final Method CONN_NEW;
    private static final Method CONN_NEW_CLIENT_DCID;

    static {
        try {
            CONN_NEW = NettyHooks.class.getMethod("connNew", long.class, int.class, long.class, int.class, long.class,
                    int.class, long.class, int.class, long.class, long.class, boolean.class);
            CONN_NEW_CLIENT_DCID = NettyHooks.class.getMethod("connNewClientDcid", long.class, int.class, long.class,
                    int.class, long.class, int.class, long.class, int.class, long.class, long.class);
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public DynamicType.Builder<?> transform(DynamicType.Builder<?> typeBuilder, TypeDescription type, ClassLoader loader,
                                            JavaModule module, ProtectionDomain domain) {
        return typeBuilder.visit(new LambdaBodies(MemberSubstitution.relaxed()
                // resolve Quiche through Netty's own loader (the implicit pool cannot see it)
                .with(MemberSubstitution.TypePoolResolver.ForClassFileLocator.of(loader))
                .method(named("quiche_conn_new_with_tls").and(takesArguments(11)))
                .replaceWith(CONN_NEW)
                .method(named("quiche_conn_new_with_tls_and_client_dcid").and(takesArguments(10)))
                .replaceWith(CONN_NEW_CLIENT_DCID)));
    }
}
