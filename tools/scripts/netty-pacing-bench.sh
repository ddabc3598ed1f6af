#!/bin/bash
# Netty QUIC pacing benchmark (BENCHMARKS.md, "Netty QUIC pacing"): quiche BBR server -> client through
# the link emulator (10 Mbit/s, 20 ms one way, 1 BDP drop-tail), netty.pacing off vs on, alternating.
#
# usage (from the repository root, after `mvn -B -o install -DskipTests` and one Netty test run, which
# creates the key store):  tools/scripts/netty-pacing-bench.sh ROUNDS BYTES CONNECTIONS
# OLD_JAR=/path/ccagent.jar adds an "on-old" run with another agent build (e.g. before a change).
# Prints one line per run: goodput per connection (Mbit/s), emulator queue drops, mean quiche smoothed
# RTT of the server connections (ms, samples after each connection's first), share of datagrams in
# >16/ms bursts at the server socket, the emulator's worst timer lateness (ms), load average.
set -u
ROUNDS=${1:-3}; BYTES=${2:-6000000}; CONNS=${3:-2}
IT=integration-tests/target
CP="test-apps/target/classes:emulator/target/classes:$(ls test-apps/netty-jars/netty-current/target/jars/*.jar | tr '\n' ':')"
OUT=$IT/netty-bench; mkdir -p $OUT
VARIANTS="off on"; [ -n "${OLD_JAR:-}" ] && VARIANTS="off on-old on"
for i in $(seq 1 $ROUNDS); do
  for v in $VARIANTS; do
    jar=agent/target/ccagent.jar; p=on
    [ $v = off ] && p=off
    [ $v = on-old ] && jar=$OLD_JAR
    out=$OUT/$v-$i.log
    timeout 240 java -Xmx256m -XX:+UseSerialGC \
      -javaagent:$jar="netty.cc=bbr;netty.pacing=$p;log=debug;netty.stats.period=250ms" \
      -cp "$CP" dev.ccagent.it.netty.NettyBulkApp keystore=$IT/netty-it/localhost.p12 \
      bytes=$BYTES connections=$CONNS link=10000000,20,1,0 > $out 2> $out.err
    mbps=$(grep '^RESULT' $out | grep -o 'mbps=[0-9.]*' | cut -d= -f2 | tr '\n' '/')
    drops=$(grep -o 'droppedQueue=[0-9]*' $out | tail -1 | cut -d= -f2)
    late=$(grep -o 'maxLatenessNanos=[0-9]*' $out | tail -1 | cut -d= -f2)
    srtt=$(cat $out $out.err | grep 'netty path side=server' | awk '{match($0,/scid=[0-9a-f]+/); id=substr($0,RSTART,RLENGTH);
      match($0,/rttUs=[0-9]+/); r=substr($0,RSTART+6,RLENGTH-6); if (id==pid) {s+=r; n++}; pid=id}
      END{if(n) printf "%.0f", s/n/1000}')
    burst=$(grep -o 'inBurstsPct=[0-9.]*' $out | tail -1 | cut -d= -f2)
    echo "round=$i $v mbps=$mbps drops=$drops srttMs=$srtt burstPct=$burst emuLateMs=$((${late:-0}/1000000)) load=$(cut -d' ' -f1 /proc/loadavg)"
  done
done
