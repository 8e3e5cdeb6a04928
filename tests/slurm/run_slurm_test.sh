#!/bin/sh
# tests/slurm/run_slurm_test.sh -- the Slurm path of scripts/sweep.lua, tested for real: start a
# one-node Slurm on localhost from Debian's packages, send a tiny sweep through it as a job
# array (sweep.lua --slurm --submit), run the same sweep locally, and check that the records
# agree (test accuracy to the bit, support numbers, losses; timings differ) and that a second
# --slurm finds nothing pending. Prints PASS/FAIL/SKIP lines (the tests/run.sh protocol).
#
# Needs root: installs slurm-wlm and munge with apt-get when missing, writes a slurm.conf from
# tests/slurm/slurm.conf.in into a temporary folder, starts munged (private socket), slurmctld
# and slurmd, and stops exactly those three (by their pid files) on exit. Nothing in /etc is
# changed (except that installing munge creates /etc/munge/munge.key if it is missing).
#   sh tests/slurm/run_slurm_test.sh        (KEEP=1 keeps the temporary folder)
# Run from tests/lua/test_sweep.lua when ATTNLAB_SLURM_TEST=1. Takes about 30 s.
set -u
cd "$(dirname "$0")/../.." || exit 1
ROOT=$(pwd)
HOST=${ATTNLAB_HOST:-$ROOT/bin/attnlab}
case $HOST in /*) ;; *) HOST=$ROOT/$HOST ;; esac
FAILED=0
pass() { echo "PASS: slurm: $1"; }
fail() { echo "FAIL: slurm: $1 ($2)"; FAILED=1; }
skip() { echo "SKIP: slurm: $1 ($2)"; exit 0; }
t0=$(date +%s)

[ "$(id -u)" -eq 0 ] || skip "one-node Slurm on localhost" "needs root to start munged, slurmctld and slurmd"
[ -x "$HOST" ] || { fail "host" "$HOST is not built (make all)"; exit 1; }

# ---- packages -----------------------------------------------------------------------------
missing=""
for p in slurm-wlm munge; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "# installing:$missing"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null 2>&1 ||
    { DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null 2>&1;
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null 2>&1; } ||
    { fail "install$missing" "apt-get install failed"; exit 1; }
fi
pass "slurm-wlm and munge installed ($(dpkg-query -W -f='${Version}' slurm-wlm))"

# ---- daemons -----------------------------------------------------------------------------------
WORK=$(mktemp -d /tmp/attnlab-slurm.XXXXXX)
chmod 755 "$WORK"
mkdir -p "$WORK/state" "$WORK/spool" "$WORK/munge"
chmod 700 "$WORK/munge"
cleanup() {
  for f in "$WORK/slurmd.pid" "$WORK/slurmctld.pid" "$WORK/munge/munged.pid"; do
    if [ -s "$f" ]; then
      pid=$(cat "$f")
      kill "$pid" 2>/dev/null
      i=0; while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
      kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
    fi
  done
  if [ "${KEEP:-0}" = 1 ]; then echo "# kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

KEY=/etc/munge/munge.key
if [ ! -s "$KEY" ]; then
  KEY=$WORK/munge/munge.key
  dd if=/dev/urandom of="$KEY" bs=1 count=1024 2>/dev/null
  chmod 400 "$KEY"
fi
SOCK=$WORK/munge/munge.socket
munged --force --socket="$SOCK" --key-file="$KEY" --pid-file="$WORK/munge/munged.pid" \
  --log-file="$WORK/munge/munged.log" --seed-file="$WORK/munge/munged.seed" >"$WORK/munge/start.log" 2>&1 ||
  { fail "munged starts" "$(tail -n 3 "$WORK/munge/start.log" "$WORK/munge/munged.log" 2>/dev/null | tr '\n' ' ')"; exit 1; }
if munge -S "$SOCK" -n | unmunge -S "$SOCK" >/dev/null 2>&1; then pass "munged runs (private socket)"
else fail "munged runs" "munge | unmunge failed"; exit 1; fi

NODE=$(hostname -s)
CPUS=$(nproc)
MEM=$(awk '/MemTotal/ { printf "%d", $2 / 1024 * 0.9 }' /proc/meminfo)
# ports: the defaults + 10000, moved further when something listens there already
CTLD_PORT=16817
while ss -ltn 2>/dev/null | grep -q ":$CTLD_PORT "; do CTLD_PORT=$((CTLD_PORT + 2)); done
SLURMD_PORT=$((CTLD_PORT + 1))
CONF=$WORK/slurm.conf
sed -e "s|@NODE@|$NODE|g" -e "s|@CPUS@|$CPUS|g" -e "s|@MEM@|$MEM|g" -e "s|@WORK@|$WORK|g" \
    -e "s|@MUNGE_SOCKET@|$SOCK|g" -e "s|@CTLD_PORT@|$CTLD_PORT|g" -e "s|@SLURMD_PORT@|$SLURMD_PORT|g" \
    tests/slurm/slurm.conf.in >"$CONF"
export SLURM_CONF=$CONF
slurmctld -c -f "$CONF" >"$WORK/slurmctld.start" 2>&1 ||
  { fail "slurmctld starts" "$(tail -n 5 "$WORK/slurmctld.start" "$WORK/slurmctld.log" | tr '\n' ' ')"; exit 1; }
slurmd -f "$CONF" -N "$NODE" >"$WORK/slurmd.start" 2>&1 ||
  { fail "slurmd starts" "$(tail -n 5 "$WORK/slurmd.start" "$WORK/slurmd.log" | tr '\n' ' ')"; exit 1; }
state=""
i=0
while [ $i -lt 60 ]; do
  state=$(sinfo -h -n "$NODE" -o %T 2>/dev/null | head -n 1)
  [ "$state" = idle ] && break
  sleep 0.5; i=$((i + 1))
done
if [ "$state" = idle ]; then pass "one-node cluster up: $NODE, $CPUS CPUs, ${MEM} MB (slurmctld port $CTLD_PORT)"
else fail "node $NODE becomes idle" "state '$state'; $(tail -n 3 "$WORK/slurmctld.log" "$WORK/slurmd.log" | tr '\n' ' ')"; exit 1; fi

# ---- the sweep, through Slurm and locally ----------------------------------------------------------
# wait_job ID: until squeue no longer lists the job (at most 180 s); sets $left
wait_job() {
  i=0
  while [ $i -lt 360 ]; do
    left=$(squeue -h -j "$1" 2>/dev/null | wc -l)
    [ "$left" -eq 0 ] && return 0
    sleep 0.5; i=$((i + 1))
  done
  scancel "$1" 2>/dev/null
  return 1
}
# submit NAME EXPERIMENT OUT: sweep.lua --slurm --submit, then wait; sets $jobid
submit() {
  "$HOST" scripts/sweep.lua "$2" --slurm --submit --cpus-per-task 1 --out "$3" >"$WORK/$1.log" 2>&1
  jobid=$(sed -n 's/^submitted job array \([0-9]*\).*/\1/p' "$WORK/$1.log")
  [ -n "$jobid" ] || { fail "$1: sweep.lua --slurm --submit" "$(tail -n 5 "$WORK/$1.log" | tr '\n' ' ')"; return 1; }
  wait_job "$jobid" || { fail "$1: job array $jobid finishes within 180 s" "$left tasks left"; return 1; }
  return 0
}

EXP=tests/slurm/tiny_experiment.lua
"$HOST" scripts/sweep.lua "$EXP" --slurm --cpus-per-task 1 --out "$WORK/slurm" >"$WORK/sweep-slurm.log" 2>&1
rc=$?
tasks=$(grep -c . "$WORK/slurm/manifest.txt" 2>/dev/null)
if [ $rc -eq 0 ] && [ "$tasks" = 4 ] && grep -q '^#SBATCH --array=1-4$' "$WORK/slurm/sweep.sbatch"; then
  pass "sweep.lua --slurm writes sweep.sbatch (array 1-4) and a 4-line manifest"
else
  fail "sweep.lua --slurm" "status $rc, manifest lines '$tasks': $(tail -n 5 "$WORK/sweep-slurm.log" | tr '\n' ' ')"; exit 1
fi
"$HOST" scripts/sweep.lua "$EXP" --slurm --submit --cpus-per-task 1 --out "$WORK/slurm" >"$WORK/submit.log" 2>&1
jobid=$(sed -n 's/^submitted job array \([0-9]*\).*/\1/p' "$WORK/submit.log")
if [ -n "$jobid" ]; then pass "sweep.lua --slurm --submit: job array $jobid queued"
else fail "sweep.lua --slurm --submit" "$(tail -n 5 "$WORK/submit.log" | tr '\n' ' ')"; exit 1; fi

# the same sweep locally while Slurm works (2 workers, 1 thread each, as the array tasks)
"$HOST" scripts/sweep.lua "$EXP" --workers 2 --threads 1 --out "$WORK/local" >"$WORK/sweep-local.log" 2>&1 ||
  fail "local sweep" "$(tail -n 5 "$WORK/sweep-local.log" | tr '\n' ' ')"

if wait_job "$jobid"; then pass "job array $jobid finished"
else fail "job array $jobid finishes within 180 s" "$left tasks left"; exit 1; fi
n_logs=$(ls "$WORK/slurm/logs/" 2>/dev/null | grep -c "^slurm-${jobid}_[1-4].out$")
[ "$n_logs" = 4 ] && pass "4 array tasks ran (slurm-${jobid}_1..4.out)" || fail "4 array task logs" "found $n_logs"

# ---- compare the records ---------------------------------------------------------------------------
compare_records() {
"$HOST" - "$WORK/local" "$WORK/slurm" "${1:-}" <<'LUA'
local dir_l, dir_s, tag = arg[1], arg[2], arg[3] or ""
local names = { "fashion_mnist__softmax__seed1", "fashion_mnist__softmax__seed2",
                "fashion_mnist__topk-0.25__seed1", "fashion_mnist__topk-0.25__seed2" }
local function load(p)
  local f = io.open(p)
  if not f then return nil end
  local s = f:read("a") f:close()
  return al.json.decode(s)
end
local function same(a, b, path)       -- exact, numbers compared bit for bit
  if type(a) ~= type(b) then return false, path end
  if type(a) == "table" then
    for k, v in pairs(a) do local ok, w = same(v, b[k], path .. "." .. tostring(k)) if not ok then return false, w end end
    for k in pairs(b) do if a[k] == nil then return false, path .. "." .. tostring(k) end end
    return true
  end
  if type(a) == "number" then return ("%a"):format(a) == ("%a"):format(b), path end
  return a == b, path
end
local bad = 0
for _, n in ipairs(names) do
  local l, s = load(dir_l .. "/" .. n .. ".json"), load(dir_s .. "/" .. n .. ".json")
  if not l or not s or l.error or s.error then
    print(("FAIL: slurm: %srecord %s in both folders (local %s, slurm %s)"):format(tag, n, l and (l.error or "ok") or "missing",
      s and (s.error or "ok") or "missing"))
    bad = bad + 1
  else
    local checks = { "test_accuracy", "support", "support_density", "support_density_real", "params", "tokens" }
    local why
    for _, k in ipairs(checks) do
      local ok, w = same(l[k], s[k], k)
      if not ok then why = w break end
    end
    if not why then
      for e = 1, #l.epochs do
        local ok, w = same(l.epochs[e].loss, s.epochs[e].loss, "epochs[" .. e .. "].loss")
        if not ok then why = w break end
      end
    end
    local ok, w = same(l.config.seed, s.config.seed, "config.seed")
    if ok then ok, w = same(l.config.normalizer, s.config.normalizer, "config.normalizer") end
    if not ok and not why then why = w end
    if why then
      print(("FAIL: slurm: %s%s equals the local record (differs at %s)"):format(tag, n, why))
      bad = bad + 1
    else
      print(("PASS: slurm: %s%s equals the local record (test accuracy %.4f = %a, density %.4f)"):format(tag, n,
        s.test_accuracy, s.test_accuracy, s.support_density))
    end
  end
end
os.exit(bad == 0 and 0 or 1)
LUA
[ $? -eq 0 ] || FAILED=1
}
compare_records

# resumable the same way: nothing left to submit
"$HOST" scripts/sweep.lua "$EXP" --slurm --cpus-per-task 1 --out "$WORK/slurm" >"$WORK/sweep-slurm2.log" 2>&1
if grep -q "nothing to submit" "$WORK/sweep-slurm2.log"; then pass "a second --slurm finds every run done"
else fail "a second --slurm finds every run done" "$(tail -n 3 "$WORK/sweep-slurm2.log" | tr '\n' ' ')"; fi

# an error record is retried by the next --slurm, and the retried task gives the same record
rm -f "$WORK/slurm/fashion_mnist__softmax__seed2.json"
printf '{"error": "simulated failure", "attempts": 1, "config": {"dataset": "fashion_mnist"}}\n' \
  >"$WORK/slurm/fashion_mnist__softmax__seed2.json"
if submit retry "$EXP" "$WORK/slurm"; then
  if grep -q '^#SBATCH --array=1-1$' "$WORK/slurm/sweep.sbatch" && grep -q 'softmax --seed 2' "$WORK/slurm/manifest.txt"; then
    pass "an error record is pending again for the next --slurm (array 1-1, job $jobid)"
  else fail "error record retried by --slurm" "$(head -n 3 "$WORK/slurm/manifest.txt" | tr '\n' ' ')"; fi
  compare_records "after the retry: "
fi

# a run that fails inside a Slurm task leaves an error record
cat >"$WORK/bad.lua" <<'LUA'
return { name = "slurm-test-bad", datasets = { "fashion_mnist", { name = "fmnist_p5", dataset = "fashion_mnist", patch = 5 } },
         normalizers = { "softmax" }, seeds = { 1 },
         schedule = { epochs = 1, batch_size = 50, train_limit = 100, test_limit = 100 } }
LUA
if submit bad "$WORK/bad.lua" "$WORK/bad"; then
  if grep -q "not a multiple of patch_size 5" "$WORK/bad/fmnist_p5__softmax__seed1.json" 2>/dev/null &&
     grep -q '"test_accuracy"' "$WORK/bad/fashion_mnist__softmax__seed1.json" 2>/dev/null; then
    pass "a failing array task writes an error record; the other task finishes (job $jobid)"
  else fail "failing array task" "$(head -c 300 "$WORK/bad/fmnist_p5__softmax__seed1.json" 2>/dev/null)"; fi
fi

echo "# slurm test took $(( $(date +%s) - t0 )) s"
[ $FAILED -eq 0 ]
