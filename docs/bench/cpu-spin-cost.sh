#!/bin/bash
# Cost of the spin detector thread (CPU spin monitor at 4 Hz + the 1 s window detector) during a
# CPU-bound kwik loopback transfer, measured from outside by the kernel's per-thread CPU accounting
# (/proc/PID/task/TID/stat utime+stime): the "ccagent-detector" thread's CPU divided by the whole
# server process's CPU. Usage (from the repository root, after mvn -B -q package -DskipTests):
#   docs/bench/cpu-spin-cost.sh [TRANSFERS] [BYTES]      (defaults 4 transfers of 16 MB each way)
# Prints one CSV line: transfers,bytes,wall_s,process_cpu_s,detector_cpu_s,detector_share_of_process
set -euo pipefail
N=${1:-4}; BYTES=${2:-16000000}
ROOT=$(pwd); APPS=$ROOT/test-apps/target/classes; AGENT=$ROOT/agent/target/ccagent.jar
M2=${M2:-$HOME/.m2/repository}
CP=$APPS:$(ls $M2/tech/kwik/kwik/0.10.9/kwik-0.10.9.jar $M2/tech/kwik/agent15/3.1/agent15-3.1.jar \
  $M2/at/favre/lib/hkdf/2.0.0/hkdf-2.0.0.jar $M2/io/whitfin/siphash/*/siphash-*.jar | tr '\n' ':')
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
keytool -genkeypair -alias server -keyalg EC -groupname secp256r1 -sigalg SHA256withECDSA -dname CN=localhost \
  -storetype PKCS12 -keystore $W/server.p12 -storepass secret -keypass secret -validity 2 >/dev/null 2>&1
mkfifo $W/in
java -Xmx256m -XX:+UseSerialGC "-javaagent:$AGENT=cc=stock;fix.kwik-stream-stall=on;log=warn" -cp $CP \
  dev.ccagent.it.jfr.JfrBulkServer $W/server.p12 $W/port $BYTES < $W/in > $W/server.log 2>&1 &
SERVER=$!; exec 3>$W/in
for i in $(seq 1 200); do [ -f $W/port ] && break; sleep 0.2; done
PORT=$(cat $W/port)
ticks() { awk '{print $14+$15}' "$1"; }
T0=$(date +%s.%N)
for i in $(seq 1 $N); do
  java -Xmx256m -XX:+UseSerialGC "-javaagent:$AGENT=fix.kwik-stream-stall=on;detect=off;log=warn" -cp $CP \
    dev.ccagent.it.jfr.BulkClientMain $PORT $BYTES 0 120 > $W/client.log 2>&1
  grep -q "^answered $BYTES" $W/client.log || { echo "transfer $i failed" >&2; cat $W/client.log >&2; }
done
T1=$(date +%s.%N)
DET=0
for t in /proc/$SERVER/task/*; do
  if [ "$(cat $t/comm)" = "ccagent-detecto" ]; then DET=$(ticks $t/stat); fi
done
PROC=$(ticks /proc/$SERVER/stat)
exec 3>&-; wait $SERVER || true
HZ=$(getconf CLK_TCK)
awk -v n=$N -v b=$BYTES -v t0=$T0 -v t1=$T1 -v p=$PROC -v d=$DET -v hz=$HZ \
  'BEGIN { printf "%d,%d,%.1f,%.2f,%.3f,%.4f\n", n, b, t1-t0, p/hz, d/hz, (p>0? d/p : 0) }'
