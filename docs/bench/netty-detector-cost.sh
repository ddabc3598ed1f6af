#!/bin/bash
# What the spin detector costs a CPU-bound Netty QUIC transfer (issue 33 item 8): NettyBulkApp (server and
# client in one JVM, Netty 4.2.17, 127.0.0.1, no emulator) with the agent, cc=cubic, no recording, detect=off
# against detect=on, in interleaved pairs (the order alternating), each run 10 checksummed transfers of BYTES
# of which the first 2 are left out (JIT warm-up). Per run: the process's CPU during the 8 measured transfers
# as the JVM accounts it (OperatingSystemMXBean.getProcessCpuTime, the app's own RESULT lines) and the
# ccagent-detector thread's CPU over the whole run (ThreadMXBean, printed by the app). Usage (from the
# repository root, after mvn -B -q install -DskipTests):
#   docs/bench/netty-detector-cost.sh [PAIRS] [BYTES] > raw.csv      (defaults 12 pairs, 25 MB)
# Prints CSV: pair,detect,measured_bytes,measured_cpu_ms,measured_wall_s,detector_cpu_ms,run_cpu_ms
set -euo pipefail
PAIRS=${1:-12}; BYTES=${2:-25000000}
ROOT=$(pwd); AGENT=$ROOT/agent/target/ccagent.jar
. "$(dirname "$0")/netty-bulk-app.sh"; CP=$NETTY_BULK_CP
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
netty_bulk_keystore "$W"
run() { # $1 pair, $2 on|off
  java -Xmx512m "-javaagent:$AGENT=cc=cubic;detect=$2;log=warn" -cp $CP dev.ccagent.it.netty.NettyBulkApp \
    keystore=$W/server.p12 connections=10 bytes=$BYTES > $W/out 2>&1 || { cat $W/out >&2; exit 1; }
  grep -q "DONE ok=true" $W/out || { echo "pair $1 detect=$2 failed" >&2; cat $W/out >&2; exit 1; }
  awk -v pair=$1 -v d=$2 '
    /^RESULT/ { for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
                if (v["conn"] >= 2) { bytes += v["bytes"]; cpu += v["cpuMs"]; wall += v["seconds"] } }
    /^THREAD ccagent-detector/ { split($3, kv, "="); det = kv[2] }
    /^CPU cpuMs/ { split($2, kv, "="); runcpu = kv[2] }
    END { printf "%d,%s,%d,%d,%.3f,%.1f,%d\n", pair, d, bytes, cpu, wall, det + 0, runcpu }' $W/out
}
echo "pair,detect,measured_bytes,measured_cpu_ms,measured_wall_s,detector_cpu_ms,run_cpu_ms"
for p in $(seq 1 $PAIRS); do
  if [ $((p % 2)) -eq 1 ]; then run $p off; run $p on; else run $p on; run $p off; fi
done
