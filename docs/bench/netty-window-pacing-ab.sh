#!/bin/bash
# Window pacing of quiche's Reno/CUBIC on Netty QUIC, two agent builds side by side (issue 33 item 2):
# NettyBulkApp (server, client and link emulator in one JVM, Netty 4.2.17) through the emulator at 20 Mbit/s,
# 25 ms each way, a 1-BDP buffer and 1% random loss towards the client; per run a 2 MB warm-up, then three
# checksummed 3 MB downloads, one after the other, on one emulator (seed 7: the n-th datagram meets the same
# loss decision in every run). Per round, in this order: unpaced (AFTER's jar, netty.pacing=off), paced with
# BEFORE's jar, paced with AFTER's jar. Goodput is the client's own (RESULT mbps); the emulator's queue median
# is printed beside it. Usage (from the repository root, after mvn -B -q install -DskipTests):
#   docs/bench/netty-window-pacing-ab.sh ROUNDS reno|cubic BEFORE.jar AFTER.jar > raw.csv
# Prints CSV: round,algorithm,arm,connection,mbps,ok,queue_p50_ms,load1 (ok: the download arrived complete, CRC checked)
set -euo pipefail
ROUNDS=${1:-4}; ALG=${2:-reno}; BEFORE=$(realpath "$3"); AFTER=$(realpath "$4")
. "$(dirname "$0")/netty-bulk-app.sh"; CP=$NETTY_BULK_CP
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
netty_bulk_keystore "$W"
run() { # $1 round, $2 arm name, $3 jar, $4 on|off
  java -Xmx256m -XX:+UseSerialGC "-javaagent:$3=netty.cc=$ALG;netty.pacing=$4;netty.stats.period=off;log=warn" -cp $CP \
    dev.ccagent.it.netty.NettyBulkApp keystore=$W/server.p12 connections=3 bytes=3000000 warmup=2000000 \
    link=20000000,25,1,0.01 > $W/out 2>&1 || true
  # a download that did not arrive complete (crcOk=false) is a row like the others, its ok column false;
  # the app's whole output goes to stderr
  grep -q "DONE ok=true" $W/out || { echo "round $1 $2: not every download arrived complete" >&2; cat $W/out >&2; }
  local load; load=$(cut -d' ' -f1 /proc/loadavg)
  awk -v r=$1 -v a=$2 -v alg=$ALG -v load=$load '
    /^EMULATOR toClient/ { if (match($0, /queueDelayP50Micros=[0-9]+/)) q = substr($0, RSTART + 20, RLENGTH - 20) / 1000 }
    /^RESULT/ { for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
                n++; conn[n] = v["conn"]; mbps[n] = v["mbps"]; ok[n] = v["crcOk"] }
    END { for (i = 1; i <= n; i++) printf "%d,%s,%s,%d,%s,%s,%.1f,%s\n", r, alg, a, conn[i], mbps[i], ok[i], q, load }' $W/out
}
echo "round,algorithm,arm,connection,mbps,ok,queue_p50_ms,load1"
for r in $(seq 1 $ROUNDS); do
  run $r unpaced "$AFTER" off
  run $r paced-before "$BEFORE" on
  run $r paced-after "$AFTER" on
done
