#!/usr/bin/env bash
# Every real DirectML release of rngcheck.backends.directml.releases, sorted by version (not by file
# name; --jobs N of them run at once, default one per core, each its own `rngcheck run`; what each says
# is printed in version order when all have ended): one result document per release, then `rngcheck compare` of each
# release against the one before it (same route), then one HTML report whose History view lines the
# releases up (every Windows release runs as the backend `directml-windows`, every Linux build as
# `directml-linux`; the run column names the release and its feature level).
#
#   bash scripts/directml_matrix.sh                          # every release, quick profile
#   bash scripts/directml_matrix.sh --profile full           # the full profile (see docs/directml.md for times)
#   bash scripts/directml_matrix.sh --newest 2 --route windows
#   bash scripts/directml_matrix.sh 1.5.1 1.15.4             # the releases named (DirectML versions or labels)
#
# Options: --profile quick|full|strict (default quick); --out DIR (default results/directml-matrix);
# --newest N (the newest N of each route); --route windows|linux; --timeout SECONDS (one release's
# run; default 1200); --jobs N (releases run at once; default the number of cores); --offline (wheels from the cache only); any other `rngcheck run` option after
# `--` (e.g. -- --stats smoke). Wheels come from PyPI (pip download), checked against the table's
# sha256 and unpacked once into $RNGCHECK_CACHE/directml. Needs the Linux route's and the Wine
# route's set-up (scripts/setup.sh). Exit status: 0 when every release ran and passed, or failed only
# where the table says why it fails here (Release.known, e.g. 1.5.1 under Wine: printed as "known");
# 1 when a release could not be fetched or run at all, failed without a known reason, or passed
# although the table says it fails (the table is then out of date).
set -uo pipefail
cd "$(dirname "$0")/.."

profile=quick out=results/directml-matrix newest="" route="" limit=1200 offline="" versions=() extra=()
jobs=$(nproc 2>/dev/null || echo 1)
while [ $# -gt 0 ]; do
  case "$1" in
    --profile) profile="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --newest) newest="--newest $2"; shift 2 ;;
    --route) route="--route $2"; shift 2 ;;
    --timeout) limit="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --offline) offline="--offline"; shift ;;
    --) shift; extra=("$@"); break ;;
    -*) echo "directml_matrix: unknown option $1" >&2; exit 2 ;;
    *) versions+=("$1"); shift ;;
  esac
done
case "$jobs" in
  ''|*[!0-9]*) jobs=0 ;;
esac
if [ "$((10#$jobs))" -lt 1 ]; then
  echo "directml_matrix: --jobs takes a number of releases at once (1 or more)" >&2; exit 2
fi
jobs=$((10#$jobs))

# shellcheck disable=SC2086  # $newest, $route and $offline are zero or two words
python3 -m rngcheck.backends.directml.releases fetch $offline $newest $route "${versions[@]}" >/dev/null || exit 1
# shellcheck disable=SC2086
mapfile -t rows < <(python3 -m rngcheck.backends.directml.releases specs $newest $route "${versions[@]}")
mkdir -p "$out"
logs=$(mktemp -d) || exit 1
# Ended early (Ctrl-C, a signal, an error): no run is left going, and the scratch folder goes.
stop_runs() { local pids; pids=$(jobs -p); [ -z "$pids" ] || { kill -TERM $pids 2>/dev/null; wait; }; }
trap 'stop_runs; rm -rf "$logs"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

document_of() {   # the row's document: NN-LABEL-flX.Y.json, NN its place in version order
  local label level
  IFS=$'\t' read -r label level _ <<<"${rows[$1]}"
  echo "$out/$(printf %02d "$(($1 + 1))")-$label-fl$level.json"
}

run_release() {   # one release's run (in the background), its output and exit status kept for the report
  local label level spec known start code child
  IFS=$'\t' read -r label level spec known <<<"${rows[$1]}"
  case "$label" in
    windows-*) spec="$spec --name directml-windows" ;;
    *) spec="$spec,name=directml-linux" ;;
  esac
  start=$SECONDS
  timeout --kill-after=30 "$limit" nice -n 10 python3 -m rngcheck run --backend "$spec" --profile "$profile" \
    --json "$(document_of "$1")" --quiet "${extra[@]}" >"$logs/$1.out" 2>&1 &
  child=$!
  trap 'kill -TERM "$child" 2>/dev/null; wait "$child"; exit 143' TERM   # timeout hands TERM on to the run
  wait "$child"
  code=$?
  echo "$code $((SECONDS - start))" >"$logs/$1.code"
}

# What a release said and its verdict, then its comparison with the release before it on its route.
status=0 previous_windows="" previous_linux="" documents=() reported=0
report_release() {
  local i=$1 label level spec known previous document code seconds
  IFS=$'\t' read -r label level spec known <<<"${rows[$i]}"
  case "$label" in windows-*) previous="$previous_windows" ;; *) previous="$previous_linux" ;; esac
  document=$(document_of "$i")
  cat "$logs/$i.out" 2>/dev/null
  if ! { read -r code seconds <"$logs/$i.code"; } 2>/dev/null; then
    echo "directml_matrix: $label (FL $level): rngcheck run ended without an exit status (killed?)" >&2
    status=1; return
  fi
  echo "directml_matrix: $label (FL $level): rngcheck run exit $code in $seconds s -> $document"
  if [ "$code" -gt 1 ] || [ ! -s "$document" ]; then status=1; return; fi
  if [ "$code" -eq 1 ] && [ -n "$known" ]; then echo "directml_matrix:   known: $known"
  elif [ "$code" -eq 1 ]; then echo "directml_matrix:   FAILED, and the table gives no reason" >&2; status=1
  elif [ -n "$known" ]; then echo "directml_matrix:   passed although the table says: $known" >&2; status=1
  fi
  documents+=("$document")
  if [ -n "$previous" ]; then
    rngcheck_compare_out=$(python3 -m rngcheck compare "$previous" "$document" --quiet \
      --html "${document%.json}.compare.html" 2>&1)
    echo "directml_matrix:   against $(basename "$previous" .json): $rngcheck_compare_out"
  fi
  case "$label" in windows-*) previous_windows="$document" ;; *) previous_linux="$document" ;; esac
}

report_ended() {   # every release not yet reported whose run, and every run before it, has ended
  while [ "$reported" -lt "${#rows[@]}" ] && [ -e "$logs/$reported.code" ]; do
    report_release "$reported"; reported=$((reported + 1))
  done
}

# The runs, --jobs at once (each release its own process and its own document), reported in version
# order as they end.
for i in "${!rows[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; [ $? -ne 127 ] || break; report_ended; done
  run_release "$i" &
done
while [ -n "$(jobs -rp)" ]; do wait -n; [ $? -ne 127 ] || break; report_ended; done
wait
while [ "$reported" -lt "${#rows[@]}" ]; do report_release "$reported"; reported=$((reported + 1)); done
if [ "${#documents[@]}" -gt 0 ]; then
  python3 -m rngcheck report "${documents[@]}" --history given --html "$out/releases.html" --quiet
  [ $? -le 1 ] || status=1    # 1: the report says FAIL (a release failed: judged above), and is written
  echo "directml_matrix: ${#documents[@]} releases, report $out/releases.html"
fi
exit $status
