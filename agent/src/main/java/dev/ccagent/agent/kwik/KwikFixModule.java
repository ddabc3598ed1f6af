package dev.ccagent.agent.kwik;

import dev.ccagent.agent.instrument.Requirement;

import java.util.List;

/**
 * What the kwik fixes ({@code fix.kwik-*}) share: the name of their option, the race they close (its
 * kwik type and members) and the agent class that holds the fix; kwik's version is read beside the
 * race's type.
 */
abstract class KwikFixModule extends KwikTargetModule {

    private final String option;
    private final Requirement race;
    private final List<Requirement> requirements;

    /** {@code fix} names the agent class with the fix: by name, as it links against kwik. */
    KwikFixModule(String option, Requirement race, String fix) {
        this.option = option;
        this.race = race;
        this.requirements = List.of(race, Requirement.agentType(fix));
    }

    @Override
    public String description() {
        return "kwik " + option;
    }

    @Override
    protected List<Requirement> requirements() {
        return requirements;
    }

    @Override
    protected String versionIn(ClassLoader loader) {
        return mavenVersion(loader, "tech.kwik", "kwik", race.typeName());
    }
}
