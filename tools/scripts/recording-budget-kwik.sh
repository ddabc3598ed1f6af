#!/bin/bash
# The recording's bytes a minute on real kwik: a KwikBulkServer with the agent (cc=bbr1) and a recording
# started with a settings file, N kwik connections held open by HoldClient (each downloads 20 kB first), and
# two JFR.dump copies of the recording SECONDS apart; the rate is the difference of their sizes. Prints the
# server's live threads and, per event type, the events and bytes the recording gained between the copies
# (the JDK's `jfr summary`). Run from the repository root after
#   mvn -B -o -q -pl tools -am package -DskipTests
# usage: tools/scripts/recording-budget-kwik.sh SETTINGS.jfc CONNECTIONS SECONDS OUTDIR
set -eu
JFC=$(readlink -f "$1"); N=$2; S=$3; D=$4
CP=tools/target/classes:$(cat tools/target/classpath.txt)
AGENT=agent/target/ccagent.jar
rm -rf "$D"; mkdir -p "$D"; mkfifo "$D/in" "$D/server-in"
exec 4<> "$D/server-in"   # the server runs until its stdin closes (the children do not inherit 3 and 4)
java -Xmx1g -XX:+UseSerialGC "-javaagent:$AGENT=cc=bbr1;log=warn" \
     "-XX:StartFlightRecording=settings=$JFC,name=budget" \
     -cp "$CP" dev.ccagent.it.kwik.KwikBulkServer --idle-seconds 900 < "$D/server-in" > "$D/server.out" 2> "$D/server.err" 3>&- 4>&- &
SERVER=$!
for i in $(seq 60); do grep -q '^PORT' "$D/server.out" && break; sleep 1; done
PORT=$(grep -m1 '^PORT' "$D/server.out" | awk '{print $2}')
exec 3<> "$D/in"   # the client holds its connections until its stdin closes
java -Xmx1g -XX:+UseSerialGC "-javaagent:$AGENT=fix.kwik-stream-stall=on;fix.kwik-loss-timer=on;log=warn" \
     -cp "$CP" dev.ccagent.it.kwik.HoldClient "$PORT" "$N" 20000 < "$D/in" > "$D/client.out" 2> "$D/client.err" 3>&- 4>&- &
CLIENT=$!
for i in $(seq 900); do grep -q '^HOLDING' "$D/client.out" && break; sleep 1; done
sleep 5
jcmd $SERVER JFR.dump name=budget filename="$D/start.jfr" > /dev/null
T0=$(date +%s.%N); THREADS=$(ls /proc/$SERVER/task | wc -l)
sleep "$S"
jcmd $SERVER JFR.dump name=budget filename="$D/stop.jfr" > /dev/null
T1=$(date +%s.%N)
# the two copies are the measurement: stop both JVMs (a client closing a thousand connections one by one takes minutes)
exec 3>&- 4>&-; kill $CLIENT $SERVER; wait $CLIENT $SERVER || true
A=$(stat -c %s "$D/start.jfr"); B=$(stat -c %s "$D/stop.jfr")
summary() { jfr summary "$1" | awk '$1 ~ /^(jdk|dev)\./ {print $1, $2, $3}' | sort; }
summary "$D/start.jfr" > "$D/start.txt"; summary "$D/stop.jfr" > "$D/stop.txt"
printf '%s: %s connections (%s), server threads %s, %.1f s, bytes a minute %d (load average %s)\n' \
    "$(basename "$JFC")" "$N" "$(grep -m1 HOLDING "$D/client.out")" "$THREADS" "$(echo "$T1-$T0" | bc)" \
    "$(echo "($B-$A)*60/($T1-$T0)" | bc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
join "$D/start.txt" "$D/stop.txt" | awk -v t="$(echo "$T1-$T0" | bc)" \
    '{de=$4-$2; db=$5-$3; if (db>0) printf "  %-36s %9d events %11d bytes a minute\n", $1, de*60/t, db*60/t}' | sort -k4 -n -r | head -12
