package dev.ccagent.jfr;

import jdk.jfr.Category;
import jdk.jfr.Configuration;
import jdk.jfr.EventType;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.Recording;
import jdk.jfr.StackTrace;
import jdk.jfr.ValueDescriptor;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CcEventsTest {

    @Test
    void eventsAreNamedLabelledCategorisedAndWithoutStackTraces() {
        assertEquals(CcEvents.NAMES.size(), CcEvents.classes().size());
        for (Class<? extends jdk.jfr.Event> c : CcEvents.classes()) {
            Name name = c.getAnnotation(Name.class);
            assertNotNull(name, c + " has @Name");
            assertTrue(name.value().startsWith("dev.ccagent."), name.value());
            assertFalse(name.value().endsWith("Event"), name.value());
            assertTrue(CcEvents.NAMES.contains(name.value()), name.value());
            Label label = c.getAnnotation(Label.class);
            assertNotNull(label);
            assertTrue(Character.isUpperCase(label.value().charAt(0)), label.value());
            for (String word : label.value().split("[ -]")) {
                assertTrue(Character.isUpperCase(word.charAt(0)), "headline case: " + label.value());
            }
            assertNotNull(c.getAnnotation(jdk.jfr.Description.class), c + " has @Description");
            Category cat = c.getAnnotation(Category.class);
            assertNotNull(cat);
            assertEquals("QUIC", cat.value()[0]);
            StackTrace st = c.getAnnotation(StackTrace.class);
            assertNotNull(st);
            assertFalse(st.value(), c + " records no stack trace");
            EventType type = EventType.getEventType(c);
            for (ValueDescriptor v : type.getFields()) {
                if (Set.of("startTime", "duration", "eventThread", "stackTrace").contains(v.getName())) {
                    continue;
                }
                assertNotNull(v.getLabel(), c.getSimpleName() + "." + v.getName() + " has a label");
            }
        }
    }

    @Test
    void unitsAreDeclared() {
        EventType cs = EventType.getEventType(CongestionState.class);
        assertEquals("jdk.jfr.DataAmount", annotationOf(cs.getField("congestionWindow"), "jdk.jfr.DataAmount"));
        assertNotNull(cs.getField("pacingRate").getAnnotation(jdk.jfr.Frequency.class));
        assertEquals(jdk.jfr.DataAmount.BYTES, cs.getField("pacingRate").getAnnotation(jdk.jfr.DataAmount.class).value());
        assertEquals(jdk.jfr.Timespan.NANOSECONDS, cs.getField("minRtt").getAnnotation(jdk.jfr.Timespan.class).value());
        assertNotNull(EventType.getEventType(PacingRateChange.class).getField("rateChange")
                .getAnnotation(jdk.jfr.Percentage.class));
    }

    private static String annotationOf(ValueDescriptor v, String type) {
        return v.getAnnotationElements().stream().map(a -> a.getTypeName()).filter(type::equals).findFirst().orElse(null);
    }

    @Test
    void settingsFileParsesAndEnablesEveryEvent() throws Exception {
        Configuration c = Configuration.create(new StringReader(CcEvents.settingsText()));
        assertEquals("ccagent", c.getLabel());
        Map<String, String> s = c.getSettings();
        for (String name : CcEvents.NAMES) {
            assertEquals("true", s.get(name + "#enabled"), name);
        }
        assertEquals("1 s", s.get("dev.ccagent.CongestionState#period"));
        assertEquals("beginChunk", s.get("dev.ccagent.ModuleVerdict#period"), "verdicts repeated at every chunk start");
        for (String jdk : List.of("jdk.CPULoad", "jdk.ThreadCPULoad", "jdk.ExecutionSample", "jdk.ObjectAllocationSample",
                "jdk.ThreadAllocationStatistics", "jdk.GarbageCollection", "jdk.GCHeapSummary")) {
            assertEquals("true", s.get(jdk + "#enabled"), jdk);
        }
        // one event per live thread per period, and kwik runs several threads per connection: at 1 s these two
        // outweighed the agent's budgeted events at a thousand connections (docs/safety.md, "The recording budget")
        for (String perThread : List.of("jdk.ThreadCPULoad", "jdk.ThreadAllocationStatistics")) {
            assertEquals("10 s", s.get(perThread + "#period"), perThread);
        }
        // the copy in the source tree is the one operators point -XX:StartFlightRecording at
        Path src = Path.of("src/main/resources/dev/ccagent/jfr/ccagent.jfc");
        assertTrue(Files.isRegularFile(src));
        assertEquals(s, Configuration.create(src).getSettings());
    }

    @Test
    void aRecordingWithTheSettingsRecordsEveryEventAndTheSwitchFollowsIt(@TempDir Path dir) throws Exception {
        JfrSwitch.install();
        AtomicInteger periodic = new AtomicInteger();
        Runnable hook = () -> {
            periodic.incrementAndGet();
            CongestionState e = new CongestionState();
            e.algorithm = "test";
            e.trigger = "periodic";
            e.commit();
        };
        JfrSwitch.whenRecorderInitialized(() -> jdk.jfr.FlightRecorder.addPeriodicEvent(CongestionState.class, hook));
        Path file = dir.resolve("r.jfr");
        try (Recording r = new Recording(Configuration.create(new StringReader(CcEvents.settingsText())))) {
            r.setSettings(withPeriod(r.getSettings(), "200 ms"));
            r.setDestination(file);
            r.start();
            assertTrue(JfrSwitch.on, "switch on while recording");
            commitOneOfEachButTheState();
            long until = System.nanoTime() + 5_000_000_000L;
            while (periodic.get() < 2 && System.nanoTime() < until) {
                Thread.sleep(50);
            }
            r.stop();
        }
        assertFalse(JfrSwitch.on, "switch off after the recording stopped");
        // a hang guard: two runs at the 200 ms period take about 0.4 s (the whole class 0.90-1.24 s in 16 runs to
        // 2026-12-04); the 5 s wait fails only if JFR's periodic thread comes 4.6 s late, 12x: under 1 in 10,000 a run
        assertTrue(periodic.get() >= 2, "periodic hook ran: " + periodic.get());
        Map<String, Integer> counts = new HashMap<>();
        Set<String> inheritedChecked = new java.util.TreeSet<>();
        for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
            counts.merge(e.getEventType().getName(), 1, Integer::sum);
            int i = CcEvents.NAMES.indexOf(e.getEventType().getName());
            if (i >= 0 && ConnectionEvent.class.isAssignableFrom(CcEvents.classes().get(i))) {
                assertInheritedFields(e, CcEvents.classes().get(i));
                inheritedChecked.add(e.getEventType().getName());
            }
        }
        // AckOnlySendLoop, AlgorithmAssigned, PacingRateChange, PacingStall, SendLoopSpin, SendPathAllocation, StreamStall
        assertEquals(7, inheritedChecked.size(), "connection events read back: " + inheritedChecked);
        for (String name : CcEvents.NAMES) {
            assertTrue(counts.getOrDefault(name, 0) > 0, name + " recorded: " + counts);
        }
        assertTrue(counts.getOrDefault("jdk.JVMInformation", 0) > 0 && counts.getOrDefault("jdk.ActiveSetting", 0) > 0,
                "JDK events from the settings: " + counts.keySet());
    }

    private static Map<String, String> withPeriod(Map<String, String> s, String period) {
        Map<String, String> m = new HashMap<>(s);
        m.put("dev.ccagent.CongestionState#period", period);
        return m;
    }

    /**
     * Commits one event of every type but {@link CongestionState}, which the test's periodic hook writes; a
     * {@link ConnectionEvent} with its library and connection id, a {@link ControllerEvent} with its algorithm.
     */
    static void commitOneOfEachButTheState() throws ReflectiveOperationException {
        for (Class<? extends jdk.jfr.Event> c : CcEvents.classes()) {
            if (c == CongestionState.class) {
                continue;
            }
            jdk.jfr.Event e = c.getDeclaredConstructor().newInstance();
            if (e instanceof ConnectionEvent connection) {
                connection.library = "kwik";
                connection.connectionId = "0a0b";
            }
            if (e instanceof ControllerEvent controller) {
                controller.algorithm = "bbr1";
            }
            e.commit();
        }
    }

    /** Reads back an event's inherited fields: the values {@link #commitOneOfEachButTheState} set, the labels of the base classes. */
    private static void assertInheritedFields(RecordedEvent e, Class<?> type) {
        String name = e.getEventType().getName();
        assertEquals("kwik", e.getString(EventFields.LIBRARY), name);
        assertEquals("0a0b", e.getString(EventFields.CONNECTION_ID), name);
        assertEquals("Library", e.getEventType().getField(EventFields.LIBRARY).getLabel(), name);
        assertEquals("Connection Id", e.getEventType().getField(EventFields.CONNECTION_ID).getLabel(), name);
        if (ControllerEvent.class.isAssignableFrom(type)) {
            assertEquals("bbr1", e.getString(EventFields.ALGORITHM), name);
            assertEquals("Algorithm", e.getEventType().getField(EventFields.ALGORITHM).getLabel(), name);
        }
    }

    /** The one table of names: every event's name is in EventNames, in CcEvents' order; every event field is in EventFields and every constant there names a field. */
    @Test
    void theNameTablesMatchTheEventClasses() throws IllegalAccessException {
        List<Class<? extends jdk.jfr.Event>> classes = CcEvents.classes();
        for (int i = 0; i < classes.size(); i++) {
            assertEquals(EventNames.ALL.get(i), classes.get(i).getAnnotation(Name.class).value());
        }
        Set<String> constants = new java.util.TreeSet<>();
        for (java.lang.reflect.Field f : EventFields.class.getDeclaredFields()) {
            if (java.lang.reflect.Modifier.isStatic(f.getModifiers()) && f.getType() == String.class) {
                constants.add((String) f.get(null));
            }
        }
        Set<String> eventFields = new java.util.TreeSet<>();
        for (Class<? extends jdk.jfr.Event> c : classes) {
            for (ValueDescriptor v : EventType.getEventType(c).getFields()) {
                eventFields.add(v.getName());
            }
        }
        // JFR's own fields (startTime, duration, eventThread, stackTrace) are the JDK's, not ours
        eventFields.removeAll(Set.of("startTime", "duration", "eventThread", "stackTrace"));
        assertEquals(eventFields, constants, "EventFields lists exactly the events' own fields");
    }
}
