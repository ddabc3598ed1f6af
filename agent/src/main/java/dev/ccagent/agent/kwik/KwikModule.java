package dev.ccagent.agent.kwik;

import dev.ccagent.agent.config.AgentConfig;
import dev.ccagent.agent.instrument.Requirement;
import net.bytebuddy.agent.builder.AgentBuilder;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

/**
 * kwik 0.10.x ({@code tech.kwik.core}): swaps each new connection's congestion controller after
 * {@code SenderImpl}'s constructor, captures ACK receive times in {@code LossDetector.onAckReceived},
 * and optionally patches the stream-send race (see {@link KwikStreamStallFix}).
 *
 * <p>Nothing here changes a class's shape (no fields or methods added), so the same transformation
 * serves {@code -javaagent} and late attach (retransformation).
 */
public final class KwikModule extends KwikTargetModule {

    static final String CC = "Ltech/kwik/core/cc/CongestionController;";

    private final AgentConfig config;

    public KwikModule(AgentConfig config) {
        this.config = config;
    }

    AgentConfig config() {
        return config;
    }

    @Override
    protected List<Requirement> requirements() {
        return List.of(
                Requirement.type(KwikReflection.SENDER_IMPL)
                        .satisfies(KwikSenderConstructor::problem) // by parameter type: kwik's main branch moved them
                        .field("congestionController", CC)
                        .field("recoveryManager", "Ltech/kwik/core/recovery/RecoveryManager;")
                        .field("connection", "Ltech/kwik/core/impl/QuicConnectionImpl;"),
                Requirement.type(KwikReflection.RECOVERY_MANAGER)
                        .field("congestionController", CC)
                        .field("lossDetectors", "[Ltech/kwik/core/recovery/LossDetector;"),
                Requirement.type(KwikReflection.LOSS_DETECTOR)
                        .field("congestionController", CC)
                        .method("onAckReceived", "(Ltech/kwik/core/frame/AckFrame;Ljava/time/Instant;)V")
                        .method("packetSent", "(Ltech/kwik/core/packet/QuicPacket;Ljava/time/Instant;Ljava/util/function/Consumer;)V"),
                Requirement.type("tech.kwik.core.cc.CongestionController")
                        .method("registerInFlight", "(Ltech/kwik/core/packet/QuicPacket;)V")
                        .method("registerAcked", "(Ljava/util/List;)V")
                        .method("registerLost", "(Ljava/util/List;)V")
                        .method("discard", "(Ljava/util/List;)V")
                        .method("remainingCwnd", "()J")
                        .method("canSend", "(I)Z")
                        .method("getBytesInFlight", "()J")
                        .method("getWindowSize", "()J")
                        .method("reset", "()V"),
                Requirement.type("tech.kwik.core.cc.CongestionControlEventListener")
                        .method("bytesInFlightDecreased", "(J)V")
                        .method("bytesInFlightIncreased", "(J)V"),
                Requirement.type("tech.kwik.core.packet.PacketInfo")
                        .method("timeSent", "()Ljava/time/Instant;")
                        .method("packet", "()Ltech/kwik/core/packet/QuicPacket;"),
                Requirement.type("tech.kwik.core.packet.QuicPacket")
                        .field("packetNumber", "J")
                        .method("getSize", "()I")
                        .method("getPnSpace", "()Ltech/kwik/core/common/PnSpace;"),
                Requirement.type("tech.kwik.core.frame.AckFrame")
                        .method("getLargestAcknowledged", "()J")
                        .method("getAckDelay", "()I"),
                Requirement.type("tech.kwik.core.cid.ConnectionIdManager")
                        .method("getOriginalDestinationConnectionId", "()[B"),
                // the hooks must be reachable from kwik's class loader (kwik on the application
                // class path, or in a child of it)
                Requirement.agentType("dev.ccagent.agent.kwik.KwikHooks"));
    }

    @Override
    protected String link(ClassLoader loader) {
        return KwikLinkage.prepare(loader);
    }


    /** Per kwik loader: whether the stream-send race that {@code fix.kwik-stream-stall} closes is there. */
    private final java.util.Map<ClassLoader, Boolean> raceByLoader =
            java.util.Collections.synchronizedMap(new java.util.WeakHashMap<>());

    @Override
    protected void onApplied(ClassLoader loader, String version) {
        super.onApplied(loader, version);
        FinalFieldMutation.noteOnce();
        if (config.fixKwikStreamStall()) {
            streamStallRacePresent(loader);
        }
    }

    /**
     * Whether the race of {@link KwikStreamStallFixModule#RACE} is there; where it is absent the fix
     * has nothing to close and is skipped (logged once per loader).
     */
    boolean streamStallRacePresent(ClassLoader loader) {
        if (loader == null) {
            return false;
        }
        Boolean known = raceByLoader.get(loader);
        if (known != null) {
            return known;
        }
        List<String> missing;
        try {
            missing = Requirement.missingIn(List.of(KwikStreamStallFixModule.RACE), loader);
        } catch (RuntimeException | LinkageError e) {
            missing = List.of("the check itself failed: " + e);
        }
        boolean present = missing.isEmpty();
        String why = present ? null : String.join("; ", missing) + " (the race it closes is kwik 0.10.7-0.10.9's;"
                + " without it the fix has nothing to close)";
        raceByLoader.put(loader, present);
        String version = versionIn(loader);
        String where = "fix.kwik-stream-stall for kwik" + (version != null ? " " + version : "") + " in "
                + KwikLinkage.loaderName(loader);
        if (present) {
            String verdict = "applied" + KwikStreamStallFixModule.whyOn(config);
            String line = where + ": " + verdict;
            dev.ccagent.agent.log.AgentLog.info(line);
            dev.ccagent.agent.runtime.AgentRuntime.recordModule(line, fixVerdict(version, loader, true,
                    dev.ccagent.agent.runtime.LoaderVerdict.appliedDetail(verdict)));
        } else {
            dev.ccagent.agent.log.AgentLog.info(where + ": skipped: " + why);
            dev.ccagent.agent.runtime.AgentRuntime.recordModule(where + ": skipped: " + why,
                    fixVerdict(version, loader, false, why));
        }
        return present;
    }

    private static dev.ccagent.agent.runtime.LoaderVerdict fixVerdict(String version, ClassLoader loader, boolean applied,
                                                                      String reason) {
        return dev.ccagent.agent.runtime.LoaderVerdict.now("kwik", "fix.kwik-stream-stall", version,
                KwikLinkage.loaderName(loader), applied, reason);
    }

    @Override
    public AgentBuilder extend(AgentBuilder builder, ElementMatcher<ClassLoader> loaderCheck) {
        AgentBuilder b = builder
                .type(typeThenLoader(named(KwikReflection.SENDER_IMPL), loaderCheck))
                .transform(KwikSenderConstructor.transformer(SenderConstructorAdvice.class))
                .type(typeThenLoader(named(KwikReflection.LOSS_DETECTOR), loaderCheck))
                .transform(agentAdvice()
                        .advice(named("onAckReceived").and(takesArguments(2)), AckReceivedAdvice.class.getName())
                        .advice(named("packetSent").and(takesArguments(3)), PacketSentAdvice.class.getName()));
        b = KwikMeter.extend(b, loaderCheck); // SenderImpl.stop(): the connection's final summary
        if (config.detect()) {
            b = KwikTelemetry.extend(b, loaderCheck); // send-loop counters for the spin detector
        }
        return b;
    }

    /** Beside the swap, {@code fix.kwik-stream-stall} where the race is (kept after a detach). */
    @Override
    public AgentBuilder extendFixes(AgentBuilder builder, ElementMatcher<ClassLoader> loaderCheck) {
        if (!config.fixKwikStreamStall()) {
            return builder;
        }
        ElementMatcher<ClassLoader> raceThere = l -> loaderCheck.matches(l) && streamStallRacePresent(l);
        return KwikStreamStallFixModule.patch(builder, raceThere);
    }

    /** {@link dev.ccagent.agent.instrument.TargetModule#typeThenLoader} for the kwik modules' types. */
    static AgentBuilder.RawMatcher typeThenLoader(ElementMatcher<? super TypeDescription> type,
                                                 ElementMatcher<ClassLoader> loader) {
        return dev.ccagent.agent.instrument.TargetModule.typeThenLoader(type, loader, false);
    }

    /** Advice whose classes Byte Buddy reads from the agent's loader, where every kwik module's advice lives. */
    static AgentBuilder.Transformer.ForAdvice agentAdvice() {
        return new AgentBuilder.Transformer.ForAdvice().include(KwikModule.class.getClassLoader());
    }

    /** Inlined at the end of SenderImpl's designated constructor (see {@link KwikSenderConstructor}). */
    public static final class SenderConstructorAdvice {
        private SenderConstructorAdvice() {
        }

        @Advice.OnMethodExit(suppress = Throwable.class)
        static void exit(@Advice.This Object sender, @KwikSenderConstructor.MaxPacketSize int maxPacketSize,
                         @KwikSenderConstructor.Id String id) {
            KwikHooks.onSenderCreated(sender, id, maxPacketSize);
        }
    }

    /**
     * Inlined at the start of LossDetector.packetSent(QuicPacket, Instant, Consumer), which registers the
     * packet with the controller next, on the same thread: kwik's send stamp, converted there.
     */
    public static final class PacketSentAdvice {
        private PacketSentAdvice() {
        }

        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.FieldValue("congestionController") Object controller,
                          @Advice.Argument(0) tech.kwik.core.packet.QuicPacket packet,
                          @Advice.Argument(1) java.time.Instant timeSent) {
            KwikHooks.onPacketSent(controller, packet, timeSent);
        }
    }

    /** Inlined at the start of LossDetector.onAckReceived(AckFrame, Instant). */
    public static final class AckReceivedAdvice {
        private AckReceivedAdvice() {
        }

        @Advice.OnMethodEnter(suppress = Throwable.class)
        static void enter(@Advice.FieldValue("congestionController") Object controller,
                          @Advice.Argument(0) tech.kwik.core.frame.AckFrame frame,
                          @Advice.Argument(1) java.time.Instant timeReceived) {
            KwikHooks.onAckReceived(controller, timeReceived, frame.getLargestAcknowledged(), frame.getAckDelay());
        }
    }
}
