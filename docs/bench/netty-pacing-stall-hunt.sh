#!/bin/bash
# Hunts the paced-download stall of 2026-12-07 (BENCHMARKS.md, "The stall, hunted, and the pacer's liveness bounds"):
# NettyBulkApp (server, client and link emulator in one JVM, Netty 4.2.17) with quiche's ALG paced from its window
# (netty.pacing=on), through the emulator at 20 Mbit/s, 25 ms each way, a 1-BDP buffer and 1% random loss; per run
# a 2 MB warm-up, then four checksummed 3 MB downloads. RUNS runs, one after the other, into DIR:
#   DIR/log     one line per run: time, run, downloads complete (ok, the warm-up included) and short (bad), load
#               average, each download's goodput
#   DIR/checks  every WARN line of a run (the liveness bounds' fallback lines among them) and, with an agent built
#               with docs/bench/netty-pacer-watch.patch and JOPTS=-Dccagent.debug.pacerwatch=true, its checks' lines:
#               PACERWATCH (every 250 ms: a queue head 50 ms late or early, or no wake-up armed), HELDLEAK (a held
#               send loop with nothing queued), FARDEPARTURE (a window-paced departure over 50 ms ahead)
#   DIR/fail-N.out  the whole output of a run whose downloads did not all arrive complete
# Usage (from the repository root, after mvn -B -q install -DskipTests):
#   [JOPTS=...] docs/bench/netty-pacing-stall-hunt.sh DIR AGENT.jar cubic|reno RUNS
set -uo pipefail
d=$1; jar=$(realpath "$2"); alg=$3; n=$4
. "$(dirname "$0")/netty-bulk-app.sh"; CP=$NETTY_BULK_CP
mkdir -p "$d"; W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
netty_bulk_keystore "$W"
for i in $(seq 1 "$n"); do
  java -Xmx256m -XX:+UseSerialGC ${JOPTS:-} "-javaagent:$jar=netty.cc=$alg;netty.pacing=on;netty.stats.period=off;log=debug" \
    -cp "$CP" dev.ccagent.it.netty.NettyBulkApp keystore=$W/server.p12 connections=4 bytes=3000000 warmup=2000000 \
    link=20000000,25,1,0.01 > "$d/out" 2>&1
  r=$(grep -c "crcOk=true" "$d/out"); s=$(grep -c "crcOk=false" "$d/out")
  echo "$(date +%T) run $i ok=$r bad=$s load=$(cut -d' ' -f1 /proc/loadavg) $(grep -o 'mbps=[0-9.]*' "$d/out" | tr '\n' ' ')" >> "$d/log"
  grep -h "PACERWATCH\|HELDLEAK\|FARDEPARTURE\|WARN" "$d/out" | sed "s/^/run $i: /" >> "$d/checks"
  grep -q "DONE ok=true" "$d/out" || cp "$d/out" "$d/fail-$i.out"
done
rm -f "$d/out"
