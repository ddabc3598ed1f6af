#!/bin/bash
# What the spin detector costs a CPU-bound Netty QUIC transfer, measured inside one JVM (issue 33 item 8):
# NettyBulkApp (server and client in one JVM, Netty 4.2.17, 127.0.0.1, no emulator) started with the agent
# (cc=cubic, detect=on, no recording) and then switched between detect=off and detect=on by attaching the agent
# anew before each transfer (`ccagent.jar attach PID ARGS`, an operator's own way to reconfigure a running
# server), in interleaved pairs whose order alternates. The first WARMUP transfers (detect=on) warm the JIT up
# and are left out.
# Per transfer: the process's CPU during the transfer as the JVM accounts it (OperatingSystemMXBean, the app's
# RESULT line; the attach runs between transfers, outside that window). Separate JVMs differ by about 22% run to
# run (netty-detector-cost.sh); pairs inside one JVM do not carry that difference.
# Usage (from the repository root, after mvn -B -q install -DskipTests):
#   docs/bench/netty-detector-cost-in-jvm.sh [PAIRS] [BYTES] [WARMUP] > raw.csv   (defaults 40 pairs, 100 MB, 10)
# Prints CSV: pair,detect,bytes,cpu_ms,wall_s,detector_threads,detector_cpu_us (the kernel's count of threads
# named ccagent-detector after the transfer and the CPU they ran since they started, /proc/PID/task/*/schedstat:
# the detector starts anew at each attach with detect=on, so this is its CPU over the attach and the transfer) and
# the client connection's packet counts as quiche keeps them (its ACKs sent, the download received); then, on
# stderr, the geometric mean of the pairs' on/off ratios of CPU per byte with its 95% interval (t over the log
# ratios), the detector thread's CPU as a share of the process's in the detect=on transfers, and packets per MB.
set -euo pipefail
PAIRS=${1:-40}; BYTES=${2:-100000000}; WARM=${3:-10}
ROOT=$(pwd); AGENT=$ROOT/agent/target/ccagent.jar
. "$(dirname "$0")/netty-bulk-app.sh"; CP=$NETTY_BULK_CP
W=$(mktemp -d); PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT
netty_bulk_keystore "$W"
N=$((2 * PAIRS + WARM))
java -Xmx512m "-javaagent:$AGENT=cc=cubic;detect=on;log=warn" -cp $CP dev.ccagent.it.netty.NettyBulkApp \
  keystore=$W/server.p12 connections=$N bytes=$BYTES step-dir=$W > $W/out 2>&1 &
PID=$!
await() { # $1 pattern in the app's output
  for _ in $(seq 1 1200); do grep -q "$1" $W/out && return 0; kill -0 $PID 2>/dev/null || break; sleep 0.1; done
  echo "no '$1' from the application" >&2; cat $W/out >&2; exit 1
}
echo "pair,detect,bytes,cpu_ms,wall_s,detector_threads,detector_cpu_us,client_packets_sent,client_packets_received"
for i in $(seq 0 $((N - 1))); do
  await "^READY $i\$"
  if [ $i -lt $WARM ]; then d=on; pair=0
  else p=$(( (i - WARM) / 2 + 1 )); first=$(( (i - WARM) % 2 == 0 )); pair=$p
    if [ $((p % 2)) -eq 1 ]; then [ $first -eq 1 ] && d=off || d=on; else [ $first -eq 1 ] && d=on || d=off; fi
  fi
  java -jar $AGENT attach $PID "cc=cubic;detect=$d;log=warn" > $W/attach 2>&1 || { cat $W/attach >&2; exit 1; }
  touch $W/go-$i
  await "^RESULT conn=$i "
  [ $i -lt $WARM ] && continue
  # the detector's thread as the kernel lists it (its name cut to 15 characters) and the CPU it has run, in ns
  # (schedstat): present when detect=on, gone when off, so each row says what really ran
  det=0; ns=0
  for t in /proc/$PID/task/*; do
    if [ "$(cat $t/comm 2>/dev/null)" = "ccagent-detecto" ]; then
      det=$((det + 1)); ns=$((ns + $(awk '{ print $1 }' $t/schedstat)))
    fi
  done
  grep "^RESULT conn=$i " $W/out | awk -v pair=$pair -v d=$d -v det=$det -v ns=$ns '{ for (k = 1; k <= NF; k++) { split($k, kv, "="); v[kv[1]] = kv[2] }
    if (v["crcOk"] != "true") { print "checksum failed" > "/dev/stderr"; exit 1 }
    printf "%d,%s,%d,%d,%s,%d,%d,%d,%d\n", pair, d, v["bytes"], v["cpuMs"], v["seconds"], det, ns / 1000,
      v["quicheSent"], v["quicheRecv"] }' | tee -a $W/csv
done
await "^DONE ok=true"
python3 - $W/csv >&2 <<'PY'
import sys, math, statistics
on, off = {}, {}
det_us = on_cpu_ms = packets = mb = 0
for line in open(sys.argv[1]):
    f = line.strip().split(",")
    p, d, b, cpu = int(f[0]), f[1], int(f[2]), int(f[3])
    (on if d == "on" else off)[p] = cpu / b
    if d == "on":
        det_us += int(f[6]); on_cpu_ms += cpu
    packets += int(f[7]) + int(f[8]); mb += b / 1e6
logs = [math.log(on[p] / off[p]) for p in sorted(on) if p in off]
n = len(logs); m = statistics.mean(logs); s = statistics.stdev(logs)
z, df = 1.959964, n - 1  # Student t quantile 0.975 (Cornish-Fisher expansion, within 0.004 from 9 degrees of freedom)
t = z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
print("pairs=%d geomean_on_off=%.4f ci95=%.4f-%.4f sd_log=%.4f" % (n, math.exp(m), math.exp(m - t * s / math.sqrt(n)),
      math.exp(m + t * s / math.sqrt(n)), s))
print("detector_thread_share_of_process_cpu=%.4f%% client_packets_per_mb=%.0f" % (100 * det_us / 1000 / on_cpu_ms,
      packets / mb))
PY
