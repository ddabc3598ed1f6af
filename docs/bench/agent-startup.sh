#!/bin/bash
# The agent's start-up cost: a JVM whose main does nothing, without the agent and with each agent jar given,
# interleaved run by run; "kwik" runs also load kwik's SenderImpl, which the agent instruments (the transform's
# cost). Wall and CPU (user + sys) from bash's `time`. Usage, from the repository root after
# `mvn -B -q package -DskipTests`:
#   docs/bench/agent-startup.sh [RUNS] [JAR...]     (defaults: 7 runs of agent/target/ccagent.jar)
# Prints CSV: jar,main,run,wall_s,cpu_s ("none" for the JVM without the agent), then the medians.
set -euo pipefail
N=${1:-7}; shift || true
JARS=("$@"); [ ${#JARS[@]} -gt 0 ] || JARS=(agent/target/ccagent.jar)
M2=${M2:-$HOME/.m2/repository}
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
cat > $W/Idle.java <<'JAVA'
public class Idle { public static void main(String[] a) throws Exception { if (a.length > 0) Class.forName(a[0]); } }
JAVA
javac -d $W $W/Idle.java
CP=$W:$(ls $M2/tech/kwik/kwik/0.10.9/kwik-0.10.9.jar $M2/tech/kwik/agent15/3.1/agent15-3.1.jar \
  $M2/at/favre/lib/hkdf/2.0.0/hkdf-2.0.0.jar $M2/io/whitfin/siphash/*/siphash-*.jar | tr '\n' ':')
TIMEFORMAT='%R %U %S'
echo "jar,main,run,wall_s,cpu_s" | tee $W/all.csv
for r in $(seq 1 $N); do
  for jar in none "${JARS[@]}"; do
    for main in idle kwik; do
      arg=(); [ $main = kwik ] && arg=(tech.kwik.core.send.SenderImpl)
      agent=(); [ $jar = none ] || agent=("-javaagent:$jar=log=warn")
      t=$( { time java -XX:+UseSerialGC "${agent[@]}" -cp $CP Idle "${arg[@]}" > /dev/null 2>&1; } 2>&1 )
      set -- $t
      echo "$jar,$main,$r,$1,$(awk "BEGIN { print $2 + $3 }")" | tee -a $W/all.csv
    done
  done
done
echo "# medians (jar,main,wall_s,cpu_s) of $N runs"
for key in $(tail -n +2 $W/all.csv | cut -d, -f1,2 | awk '!seen[$0]++'); do
  for col in 4 5; do
    grep "^$key," $W/all.csv | cut -d, -f$col | sort -n | awk '{v[NR]=$1} END {printf "%s", (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'
    [ $col = 4 ] && printf ' ' || echo
  done | sed "s|^|$key,|; s| |,|"
done
