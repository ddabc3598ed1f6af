#!/bin/bash
# Netty QUIC window pacing benchmark (BENCHMARKS.md, "Netty QUIC: pacing quiche's Reno and CUBIC"): quiche
# Reno and CUBIC, server -> client through the link emulator (20 Mbit/s, 20 ms one way, 1-BDP drop-tail),
# clean and 1% random loss, netty.pacing off vs on, alternating.
#
# usage (from the repository root, after `mvn -B -o package -DskipTests` and one Netty test run, which
# creates the key store):  tools/scripts/netty-window-pacing-bench.sh ROUNDS [CSV]
# Prints (and appends to CSV, default docs/bench/netty-window-pacing.csv) one row per run:
# round,algorithm,link,pacing,mbps,maxPerMs,backToBackPct,queueP50Ms,queueP95Ms,droppedQueue,droppedRandom,load1
# maxPerMs = the densest millisecond of datagram writes at the server's UDP socket (after the pacer);
# queue = the emulator's bottleneck queue wait; load1 = the 1-minute load average after the run.
set -u
ROUNDS=${1:-3}; CSV=${2:-docs/bench/netty-window-pacing.csv}
IT=integration-tests/target
CP="test-apps/target/classes:emulator/target/classes:link-model/target/classes:$(ls test-apps/netty-jars/netty-current/target/jars/*.jar | tr '\n' ':')"
OUT=$IT/netty-window-bench; mkdir -p $OUT "$(dirname "$CSV")"
[ -f "$CSV" ] || echo "round,algorithm,link,pacing,mbps,maxPerMs,backToBackPct,queueP50Ms,queueP95Ms,droppedQueue,droppedRandom,load1" > "$CSV"
val() { grep -o "$1=[0-9.]*" "$2" | tail -1 | cut -d= -f2; }
for i in $(seq 1 "$ROUNDS"); do
  for cc in reno cubic; do
    for link in clean loss1; do
      if [ $link = clean ]; then spec=20000000,20,1,0; bytes=6000000; else spec=20000000,20,1,0.01; bytes=3000000; fi
      for p in off on; do
        out=$OUT/$cc-$link-$p-$i.log
        timeout 240 java -Xmx256m -XX:+UseSerialGC \
          -javaagent:agent/target/ccagent.jar="netty.cc=$cc;netty.pacing=$p;netty.stats.period=off;log=info" \
          -cp "$CP" dev.ccagent.it.netty.NettyBulkApp keystore=$IT/netty-it/localhost.p12 \
          bytes=$bytes connections=1 warmup=4000000 link=$spec > $out 2> $out.err
        q50=$(val queueDelayP50Micros $out); q95=$(val queueDelayP95Micros $out)
        row="$i,$cc,$link,$p,$(grep '^RESULT' $out | grep -o 'mbps=[0-9.]*' | cut -d= -f2),$(val maxPerMs $out),$(val backToBackPct $out)"
        row="$row,$(awk "BEGIN{printf \"%.1f\", ${q50:-0}/1000}"),$(awk "BEGIN{printf \"%.1f\", ${q95:-0}/1000}")"
        row="$row,$(val droppedQueue $out),$(val droppedRandom $out),$(cut -d' ' -f1 /proc/loadavg)"
        echo "$row" | tee -a "$CSV"
      done
    done
  done
done
